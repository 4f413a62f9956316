//! The REAPI `Action` of an action description: `Command` + input-root Merkle tree of
//! `Directory` messages, encoded canonically so any REAPI client computes the same key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use bazel_remote_apis::build::bazel::remote::execution::v2 as re;

use crate::{ActionDescription, Digest};

/// The Action digest plus every blob it references that the client itself produces
/// (Action, Command, input-root directories); input file contents are not included.
pub struct EncodedAction {
    pub action_digest: Digest,
    pub command_digest: Digest,
    pub input_root_digest: Digest,
    /// Action first, then Command, then directories: the order buck2 uploads them in.
    pub blobs: Vec<(Digest, Vec<u8>)>,
}

impl ActionDescription {
    /// The ActionCache key: the digest of the encoded REAPI `Action`.
    pub fn action_digest(&self) -> Result<Digest> {
        Ok(encode_action(self)?.action_digest)
    }
}

#[allow(deprecated)] // the v2.0 fields are set on purpose, see below
pub fn command_of(desc: &ActionDescription) -> Command {
    let mut env: Vec<_> = desc.env.clone();
    env.sort();
    let mut output_files = desc.output_files.clone();
    output_files.sort();
    output_files.dedup();
    let mut output_dirs = desc.output_dirs.clone();
    output_dirs.sort();
    output_dirs.dedup();
    let mut output_paths: Vec<String> = output_files.iter().chain(&output_dirs).cloned().collect();
    output_paths.sort();
    output_paths.dedup();
    let mut props = desc.platform.clone();
    props.sort();
    re::Command {
        arguments: desc.argv.clone(),
        environment_variables: env
            .into_iter()
            .map(|(name, value)| re::command::EnvironmentVariable { name, value })
            .collect(),
        // v2.0 servers read the split lists, v2.1+ servers `output_paths`; both are set so
        // the entry is readable by either (the spec allows it during the transition).
        output_files,
        output_directories: output_dirs,
        output_paths,
        platform: if props.is_empty() {
            None
        } else {
            Some(re::Platform {
                properties: props
                    .into_iter()
                    .map(|(name, value)| re::platform::Property { name, value })
                    .collect(),
            })
        },
        working_directory: String::new(),
        ..Default::default()
    }
}

type Command = re::Command;

pub fn encode_action(desc: &ActionDescription) -> Result<EncodedAction> {
    encode_action_with(desc, false)
}

/// `action_platform`: also put the Command's platform into `Action.platform` (REAPI v2.2),
/// which remote execution does so schedulers can match workers without reading the
/// Command. Cache-only keys leave it out, so they stay what they were.
#[allow(deprecated)] // Command.platform: v2.0/2.1 servers read it there
pub fn encode_action_with(
    desc: &ActionDescription,
    action_platform: bool,
) -> Result<EncodedAction> {
    let command = command_of(desc);
    let platform = if action_platform {
        command.platform.clone()
    } else {
        None
    };
    let (command_digest, command_bytes) = Digest::of_message(&command);
    let mut root = DirNode::default();
    for input in &desc.inputs {
        root.insert(&input.path, &input.digest, input.is_executable)
            .with_context(|| format!("input `{}` of the action", input.path))?;
    }
    let mut dir_blobs = Vec::new();
    let input_root_digest = root.encode(&mut dir_blobs);
    let action = re::Action {
        command_digest: Some(command_digest.to_proto()),
        input_root_digest: Some(input_root_digest.to_proto()),
        platform,
        ..Default::default()
    };
    let (action_digest, action_bytes) = Digest::of_message(&action);
    let mut blobs = vec![
        (action_digest.clone(), action_bytes),
        (command_digest.clone(), command_bytes),
    ];
    blobs.extend(dir_blobs);
    Ok(EncodedAction {
        action_digest,
        command_digest,
        input_root_digest,
        blobs,
    })
}

/// Refuses paths that could escape the root or collide after normalisation.
pub fn check_relative_path(path: &str) -> Result<Vec<&str>> {
    if path.is_empty() {
        bail!("empty path");
    }
    if path.starts_with('/') {
        bail!("`{path}` is absolute; paths must be relative to the project root");
    }
    let parts: Vec<&str> = path.split('/').collect();
    if parts
        .iter()
        .any(|p| p.is_empty() || *p == "." || *p == "..")
    {
        bail!("`{path}` is not a normalised relative path");
    }
    Ok(parts)
}

#[derive(Default)]
struct DirNode {
    files: BTreeMap<String, (Digest, bool)>,
    dirs: BTreeMap<String, DirNode>,
}

impl DirNode {
    fn insert(&mut self, path: &str, digest: &Digest, exec: bool) -> Result<()> {
        let parts = check_relative_path(path)?;
        let (name, parents) = parts.split_last().expect("non-empty");
        let mut node = self;
        for p in parents {
            if node.files.contains_key(*p) {
                bail!("`{p}` is both a file and a directory in the input root");
            }
            node = node.dirs.entry(p.to_string()).or_default();
        }
        if node.dirs.contains_key(*name) {
            bail!("`{path}` is both a file and a directory in the input root");
        }
        match node.files.get(*name) {
            Some((d, e)) if (d, *e) != (digest, exec) => {
                bail!("`{path}` is listed twice with different contents")
            }
            _ => {
                node.files.insert(name.to_string(), (digest.clone(), exec));
            }
        }
        Ok(())
    }

    /// BTreeMap iteration gives the name order REAPI requires for canonical Directories.
    fn encode(&self, blobs: &mut Vec<(Digest, Vec<u8>)>) -> Digest {
        let dir = re::Directory {
            files: self
                .files
                .iter()
                .map(|(name, (d, exec))| re::FileNode {
                    name: name.clone(),
                    digest: Some(d.to_proto()),
                    is_executable: *exec,
                    node_properties: None,
                })
                .collect(),
            directories: self
                .dirs
                .iter()
                .map(|(name, child)| re::DirectoryNode {
                    name: name.clone(),
                    digest: Some(child.encode(blobs).to_proto()),
                })
                .collect(),
            ..Default::default()
        };
        let (digest, bytes) = Digest::of_message(&dir);
        if !blobs.iter().any(|(d, _)| *d == digest) {
            blobs.push((digest.clone(), bytes));
        }
        digest
    }
}

/// One file of an output directory, as found on disk.
pub struct TreeFile {
    pub on_disk: PathBuf,
    pub digest: Digest,
}

/// An output directory as a REAPI `Tree` blob plus the files it references.
pub struct EncodedTree {
    pub tree_digest: Digest,
    pub tree_bytes: Vec<u8>,
    pub files: Vec<TreeFile>,
}

pub fn encode_output_dir(dir: &Path) -> Result<EncodedTree> {
    let mut children: Vec<(Digest, re::Directory)> = Vec::new();
    let mut files = Vec::new();
    let root = walk_dir(dir, "", &mut children, &mut files)?;
    let tree = re::Tree {
        root: Some(root),
        children: children.into_iter().map(|(_, d)| d).collect(),
    };
    let (tree_digest, tree_bytes) = Digest::of_message(&tree);
    Ok(EncodedTree {
        tree_digest,
        tree_bytes,
        files,
    })
}

fn walk_dir(
    dir: &Path,
    rel: &str,
    children: &mut Vec<(Digest, re::Directory)>,
    files: &mut Vec<TreeFile>,
) -> Result<re::Directory> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .with_context(|| format!("reading output directory {}", dir.display()))?
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("reading output directory {}", dir.display()))?;
    entries.sort_by_key(|e| e.file_name());
    let mut out = re::Directory::default();
    for entry in entries {
        let name = entry
            .file_name()
            .into_string()
            .map_err(|n| anyhow::anyhow!("non-UTF-8 file name {n:?} in {}", dir.display()))?;
        let path = entry.path();
        let child_rel = if rel.is_empty() {
            name.clone()
        } else {
            format!("{rel}/{name}")
        };
        let meta = std::fs::symlink_metadata(&path)
            .with_context(|| format!("inspecting {}", path.display()))?;
        if meta.file_type().is_symlink() {
            bail!(
                "{} is a symlink; output directories with symlinks are not uploaded to the \
                 remote cache",
                path.display()
            );
        } else if meta.is_dir() {
            let sub = walk_dir(&path, &child_rel, children, files)?;
            let (digest, _) = Digest::of_message(&sub);
            out.directories.push(re::DirectoryNode {
                name,
                digest: Some(digest.to_proto()),
            });
            if !children.iter().any(|(d, _)| *d == digest) {
                children.push((digest, sub));
            }
        } else {
            use std::os::unix::fs::PermissionsExt;
            let digest = Digest::of_file(&path)?;
            let is_executable = meta.permissions().mode() & 0o111 != 0;
            out.files.push(re::FileNode {
                name,
                digest: Some(digest.to_proto()),
                is_executable,
                node_properties: None,
            });
            files.push(TreeFile {
                on_disk: path,
                digest,
            });
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::InputFile;

    fn desc(inputs: Vec<(&str, &[u8])>) -> ActionDescription {
        ActionDescription {
            argv: vec!["cc".into(), "-c".into()],
            env: vec![("B".into(), "2".into()), ("A".into(), "1".into())],
            output_files: vec!["out/b.o".into(), "out/a.o".into()],
            output_dirs: vec![],
            inputs: inputs
                .into_iter()
                .map(|(p, c)| InputFile {
                    path: p.into(),
                    digest: Digest::of_bytes(c),
                    is_executable: false,
                })
                .collect(),
            platform: vec![],
        }
    }

    #[test]
    fn input_order_does_not_change_the_key() {
        let a = desc(vec![("src/x.c", b"x"), ("src/y.c", b"y"), ("z", b"z")]);
        let b = desc(vec![("z", b"z"), ("src/y.c", b"y"), ("src/x.c", b"x")]);
        assert_eq!(a.action_digest().unwrap(), b.action_digest().unwrap());
        let c = desc(vec![("z", b"z"), ("src/y.c", b"Y"), ("src/x.c", b"x")]);
        assert_ne!(a.action_digest().unwrap(), c.action_digest().unwrap());
    }

    #[test]
    fn env_is_sorted_in_the_command() {
        let cmd = command_of(&desc(vec![]));
        let names: Vec<_> = cmd
            .environment_variables
            .iter()
            .map(|e| e.name.as_str())
            .collect();
        assert_eq!(names, ["A", "B"]);
        assert_eq!(cmd.output_paths, ["out/a.o", "out/b.o"]);
    }

    #[test]
    fn bad_input_paths_are_errors() {
        for p in ["/abs", "a/../b", "a//b", ""] {
            assert!(encode_action(&desc(vec![(p, b"x")])).is_err(), "{p}");
        }
        assert!(encode_action(&desc(vec![("a", b"x"), ("a/b", b"y")])).is_err());
    }
}
