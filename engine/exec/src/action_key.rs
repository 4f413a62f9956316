//! The action key: sha256 over everything that determines an action's result, so a cache
//! entry is reused only when re-running the action would give the same outputs.

use std::env;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::Serialize;

use forge_core::{Action, ActionKind};
use forge_reapi::{ActionDescription, Digest, InputFile};

use crate::digest::{hash_bytes, input_digest, DigestCache, InputDigest};

/// Bumped whenever the key material changes shape, so old cache entries are never reused.
const KEY_VERSION: u32 = 1;

/// The program an action runs and its content digest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct ToolIdentity {
    pub path: String,
    pub hash: String,
}

pub struct KeyedAction {
    pub key: String,
    pub inputs: Vec<InputDigest>,
    pub tool: Option<ToolIdentity>,
}

#[derive(Serialize)]
struct KeyMaterial<'a> {
    version: u32,
    kind: &'static str,
    argv: &'a [String],
    env: &'a [(String, String)],
    scratch: &'a str,
    content_hash: Option<String>,
    executable: bool,
    entries: Vec<(&'a str, &'a str)>,
    outputs: Vec<(&'a str, bool)>,
    inputs: Vec<(&'a str, &'a str, bool, bool)>,
    tool: Option<&'a ToolIdentity>,
}

/// Resolves the program of a run action: a project file (declared input), an absolute path,
/// or a name looked up on PATH.
pub fn resolve_tool(
    argv0: &str,
    root: &Path,
    inputs: &[InputDigest],
    digests: &DigestCache,
) -> Option<ToolIdentity> {
    if argv0.contains('/') && !argv0.starts_with('/') {
        let clean = argv0.trim_start_matches("./");
        return inputs
            .iter()
            .find(|i| i.path == clean)
            .map(|i| ToolIdentity {
                path: clean.to_string(),
                hash: i.hash.clone(),
            })
            .or_else(|| {
                digests
                    .file_digest(&root.join(clean))
                    .ok()
                    .map(|d| ToolIdentity {
                        path: clean.to_string(),
                        hash: d.hash,
                    })
            });
    }
    let path = if argv0.starts_with('/') {
        PathBuf::from(argv0)
    } else {
        find_on_path(argv0)?
    };
    let hash = digests.file_digest(&path).ok()?.hash;
    Some(ToolIdentity {
        path: path.to_string_lossy().into_owned(),
        hash,
    })
}

pub fn find_on_path(name: &str) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let path = env::var_os("PATH")?;
    env::split_paths(&path).map(|dir| dir.join(name)).find(|p| {
        p.metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    })
}

/// Digests the inputs of `action` and computes its key.
pub fn key_action(action: &Action, root: &Path, digests: &DigestCache) -> Result<KeyedAction> {
    let mut inputs = Vec::with_capacity(action.inputs.len());
    let mut seen = std::collections::BTreeSet::new();
    for input in &action.inputs {
        let rel = input.path();
        if !seen.insert(rel) {
            continue;
        }
        match input_digest(digests, root, rel) {
            Ok(d) => inputs.push(d),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let what = match input {
                    forge_core::ArtifactRef::Source(_) => "source file",
                    forge_core::ArtifactRef::Build(_) => "build output",
                };
                bail!(
                    "Missing input: the {what} `{rel}` does not exist. \
                     Create it, or fix the rule that lists it as an input."
                );
            }
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("reading input `{rel}` of {}", action.display_name()))
            }
        }
    }
    inputs.sort_by(|a, b| a.path.cmp(&b.path));
    let outputs: Vec<(&str, bool)> = action
        .outputs
        .iter()
        .map(|o| (o.path.as_str(), o.is_dir))
        .collect();
    let empty: &[String] = &[];
    let no_env: &[(String, String)] = &[];
    let mut material = KeyMaterial {
        version: KEY_VERSION,
        kind: "",
        argv: empty,
        env: no_env,
        scratch: "",
        content_hash: None,
        executable: false,
        entries: Vec::new(),
        outputs,
        inputs: inputs
            .iter()
            .map(|i| (i.path.as_str(), i.hash.as_str(), i.executable, i.is_dir))
            .collect(),
        tool: None,
    };
    let tool;
    match &action.kind {
        ActionKind::Run {
            argv, env, scratch, ..
        } => {
            if argv.is_empty() {
                bail!("The command line is empty.");
            }
            tool = resolve_tool(&argv[0], root, &inputs, digests);
            material.kind = "run";
            material.argv = argv;
            material.env = env;
            material.scratch = scratch;
        }
        ActionKind::Write {
            content,
            is_executable,
        } => {
            tool = None;
            material.kind = "write";
            material.content_hash = Some(hash_bytes(content));
            material.executable = *is_executable;
        }
        ActionKind::Copy { src } => {
            tool = None;
            material.kind = "copy";
            material.entries = vec![("", src.path())];
        }
        ActionKind::SymlinkedDir { entries } => {
            tool = None;
            material.kind = "symlinked_dir";
            material.entries = entries
                .iter()
                .map(|(k, a)| (k.as_str(), a.path()))
                .collect();
        }
        ActionKind::CopiedDir { entries } => {
            tool = None;
            material.kind = "copied_dir";
            material.entries = entries
                .iter()
                .map(|(k, a)| (k.as_str(), a.path()))
                .collect();
        }
    }
    material.tool = tool.as_ref();
    let key = hash_bytes(&serde_json::to_vec(&material).expect("key material serialises"));
    Ok(KeyedAction { key, inputs, tool })
}

/// The REAPI-shaped description of a run action for the remote cache.
pub fn describe(action: &Action, keyed: &KeyedAction) -> Option<ActionDescription> {
    let ActionKind::Run {
        argv, env, scratch, ..
    } = &action.kind
    else {
        return None;
    };
    let mut env = env.clone();
    env.push(("BUCK_SCRATCH_PATH".to_string(), scratch.clone()));
    env.sort();
    let mut inputs = Vec::new();
    for i in &keyed.inputs {
        if i.is_dir {
            for f in &i.files {
                inputs.push(InputFile {
                    path: format!("{}/{}", i.path, f.rel),
                    digest: Digest {
                        hash: f.digest.hash.clone(),
                        size_bytes: f.digest.size as i64,
                    },
                    is_executable: f.digest.executable,
                });
            }
        } else {
            inputs.push(InputFile {
                path: i.path.clone(),
                digest: Digest {
                    hash: i.hash.clone(),
                    size_bytes: i.size as i64,
                },
                is_executable: i.executable,
            });
        }
    }
    let mut platform = Vec::new();
    if let Some(t) = &keyed.tool {
        platform.push((
            "forge-tool".to_string(),
            format!("{}@sha256:{}", t.path, t.hash),
        ));
    }
    Some(ActionDescription {
        argv: argv.clone(),
        env,
        output_files: action
            .outputs
            .iter()
            .filter(|o| !o.is_dir)
            .map(|o| o.path.clone())
            .collect(),
        output_dirs: action
            .outputs
            .iter()
            .filter(|o| o.is_dir)
            .map(|o| o.path.clone())
            .collect(),
        inputs,
        platform,
    })
}
