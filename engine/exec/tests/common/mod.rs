//! Builds action graphs directly (no loader or analysis), the way analysis would.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;

use forge_core::{
    Action, ActionGraph, ActionId, ActionKind, ArtifactRef, CommandSpec, OutputDecl,
    ProvidersLabel, TargetLabel, TestSpec,
};
use forge_exec::{ExecOptions, Executor, SandboxMode};

pub const CFG: &str = "1ef78538d8598cb2";

pub fn label(pkg: &str, name: &str) -> TargetLabel {
    TargetLabel {
        cell: "root".into(),
        package: pkg.into(),
        name: name.into(),
    }
}

/// `buck-out/forge/art/root/<cfg>/<pkg>/__<name>__/<short>`.
pub fn out(pkg: &str, name: &str, short: &str) -> String {
    if pkg.is_empty() {
        format!("buck-out/forge/art/root/{CFG}/__{name}__/{short}")
    } else {
        format!("buck-out/forge/art/root/{CFG}/{pkg}/__{name}__/{short}")
    }
}

#[derive(Default)]
pub struct GraphBuilder {
    pub graph: ActionGraph,
}

pub struct RunSpec<'a> {
    pub owner: TargetLabel,
    pub category: &'a str,
    pub identifier: Option<&'a str>,
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub inputs: Vec<ArtifactRef>,
    pub outputs: Vec<(String, bool)>,
    pub weight: u32,
    pub allow_cache_upload: Option<bool>,
}

impl<'a> RunSpec<'a> {
    pub fn new(owner: TargetLabel, category: &'a str, argv: &[&str]) -> RunSpec<'a> {
        RunSpec {
            owner,
            category,
            identifier: None,
            argv: argv.iter().map(|s| s.to_string()).collect(),
            env: Vec::new(),
            inputs: Vec::new(),
            outputs: Vec::new(),
            weight: 1,
            allow_cache_upload: None,
        }
    }
    pub fn output(mut self, path: &str) -> Self {
        self.outputs.push((path.to_string(), false));
        self
    }
    pub fn dir_output(mut self, path: &str) -> Self {
        self.outputs.push((path.to_string(), true));
        self
    }
    pub fn source(mut self, path: &str) -> Self {
        self.inputs.push(ArtifactRef::Source(path.to_string()));
        self
    }
    pub fn input(mut self, path: &str) -> Self {
        self.inputs.push(ArtifactRef::Build(path.to_string()));
        self
    }
    pub fn id(mut self, identifier: &'a str) -> Self {
        self.identifier = Some(identifier);
        self
    }
    pub fn env(mut self, k: &str, v: &str) -> Self {
        self.env.push((k.to_string(), v.to_string()));
        self
    }
    pub fn weight(mut self, w: u32) -> Self {
        self.weight = w;
        self
    }
    pub fn upload(mut self, allow: bool) -> Self {
        self.allow_cache_upload = Some(allow);
        self
    }
}

impl GraphBuilder {
    fn push(
        &mut self,
        owner: TargetLabel,
        category: &str,
        identifier: Option<&str>,
        kind: ActionKind,
        inputs: Vec<ArtifactRef>,
        outputs: Vec<(String, bool)>,
    ) -> ActionId {
        let id = ActionId(self.graph.actions.len());
        for (p, _) in &outputs {
            self.graph.producers.insert(p.clone(), id);
        }
        self.graph.actions.push(Action {
            id,
            owner,
            category: category.into(),
            identifier: identifier.map(str::to_string),
            kind,
            inputs,
            outputs: outputs
                .into_iter()
                .map(|(path, is_dir)| OutputDecl { path, is_dir })
                .collect(),
        });
        id
    }

    pub fn run(&mut self, spec: RunSpec) -> ActionId {
        let scratch = format!(
            "buck-out/forge/tmp/root/0123456789abcdef/{}{}",
            spec.category,
            spec.identifier.map(|i| format!("/{i}")).unwrap_or_default()
        );
        let mut env = spec.env.clone();
        env.sort();
        let kind = ActionKind::Run {
            argv: spec.argv,
            env,
            local_only: false,
            prefer_local: false,
            allow_cache_upload: spec.allow_cache_upload,
            weight: spec.weight,
            scratch,
        };
        self.push(
            spec.owner,
            spec.category,
            spec.identifier,
            kind,
            spec.inputs,
            spec.outputs,
        )
    }

    pub fn write(&mut self, owner: TargetLabel, path: &str, content: &str, exec: bool) -> ActionId {
        let kind = ActionKind::Write {
            content: content.as_bytes().to_vec(),
            is_executable: exec,
        };
        self.push(
            owner,
            "write",
            Some(path),
            kind,
            Vec::new(),
            vec![(path.to_string(), false)],
        )
    }

    pub fn copy(&mut self, owner: TargetLabel, dst: &str, src: ArtifactRef) -> ActionId {
        let kind = ActionKind::Copy { src: src.clone() };
        self.push(
            owner,
            "copy",
            Some(dst),
            kind,
            vec![src],
            vec![(dst.to_string(), false)],
        )
    }

    pub fn symlinked_dir(
        &mut self,
        owner: TargetLabel,
        dst: &str,
        entries: Vec<(&str, ArtifactRef)>,
    ) -> ActionId {
        let inputs = entries.iter().map(|(_, a)| a.clone()).collect();
        let kind = ActionKind::SymlinkedDir {
            entries: entries
                .into_iter()
                .map(|(k, a)| (k.to_string(), a))
                .collect(),
        };
        self.push(
            owner,
            "symlinked_dir",
            Some(dst),
            kind,
            inputs,
            vec![(dst.to_string(), true)],
        )
    }

    pub fn copied_dir(
        &mut self,
        owner: TargetLabel,
        dst: &str,
        entries: Vec<(&str, ArtifactRef)>,
    ) -> ActionId {
        let inputs = entries.iter().map(|(_, a)| a.clone()).collect();
        let kind = ActionKind::CopiedDir {
            entries: entries
                .into_iter()
                .map(|(k, a)| (k.to_string(), a))
                .collect(),
        };
        self.push(
            owner,
            "copied_dir",
            Some(dst),
            kind,
            inputs,
            vec![(dst.to_string(), true)],
        )
    }
}

pub fn options(root: &Path, sandbox: SandboxMode) -> ExecOptions {
    let mut o = ExecOptions::new(root);
    o.sandbox = sandbox;
    o.sandbox_worker = Some(WORKER.into());
    o.console = forge_exec::ConsoleMode::Quiet;
    o.jobs = 2;
    o
}

/// The persistent sandbox's worker program, as cargo built it for these tests.
pub const WORKER: &str = env!("CARGO_BIN_EXE_forge-sandbox");

pub fn executor(root: &Path, sandbox: SandboxMode) -> Executor {
    Executor::new(options(root, sandbox)).unwrap()
}

pub fn with_remote(
    root: &Path,
    remote: Arc<dyn forge_reapi::RemoteCache>,
    mode: forge_exec::RemoteMode,
) -> Executor {
    let mut o = options(root, SandboxMode::Bubblewrap);
    o.remote = Some(remote);
    o.remote_mode = mode;
    Executor::new(o).unwrap()
}

fn bwrap_runs() -> bool {
    Command::new("bwrap")
        .args(["--ro-bind", "/", "/", "--unshare-all", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map(|s| s.success())
        .unwrap_or(false)
}

/// Why a test fails where bubblewrap cannot run (forge's default sandbox needs it).
pub const BWRAP_MISSING: &str = "bubblewrap (`bwrap`, Debian `bubblewrap`, listed in tools/bootstrap/apt.txt) must be installed and able to create user namespaces: it is forge's default sandbox";

/// Whether bubblewrap runs here. This project's `.buckconfig` requires it (`[forge] sandbox
/// = bwrap`), so a machine without it fails the test, unless `FORGE_ALLOW_MISSING` names
/// `bwrap`: then `false` (the caller returns).
pub fn bwrap_available() -> bool {
    if bwrap_runs() {
        return true;
    }
    forge_allow_missing::missing(
        "bwrap",
        "`bwrap --ro-bind / / --unshare-all true` does not run here",
    );
    false
}

/// The sandbox modes this machine can test: both, or (with `FORGE_ALLOW_MISSING=bwrap`)
/// the symlink forest only.
pub fn sandbox_modes() -> Vec<SandboxMode> {
    let mut v = vec![SandboxMode::SymlinkForest];
    if bwrap_available() {
        v.push(SandboxMode::Bubblewrap);
    }
    v
}

pub fn sh(script: &str) -> Vec<String> {
    vec!["/bin/sh".into(), "-c".into(), script.into()]
}

pub fn write_file(root: &Path, rel: &str, content: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

pub fn read(root: &Path, rel: &str) -> String {
    std::fs::read_to_string(root.join(rel)).unwrap_or_else(|e| panic!("reading {rel}: {e}"))
}

/// Processes (other than this one) whose environment holds `FORGE_TEST_MARKER=<marker>`.
pub fn processes_with_env(marker: &str) -> Vec<i32> {
    let needle = format!("FORGE_TEST_MARKER={marker}");
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if pid as u32 == std::process::id() {
            continue;
        }
        if let Ok(env) = std::fs::read(e.path().join("environ")) {
            if env.split(|b| *b == 0).any(|v| v == needle.as_bytes()) {
                found.push(pid);
            }
        }
    }
    found
}

/// A `custom` test `t:NAME` running `script` under `sh` with `env`; its inputs' paths are
/// the script's arguments (`$1`, ...).
pub fn test_spec(
    name: &str,
    script: &str,
    env: &[(&str, &str)],
    inputs: Vec<ArtifactRef>,
) -> TestSpec {
    let mut argv = sh(script);
    argv.push("--".into());
    argv.extend(inputs.iter().map(|i| i.path().to_string()));
    TestSpec {
        label: ProvidersLabel {
            target: label("t", name),
            sub_target: Vec::new(),
        },
        configuration: "<unspecified>".into(),
        test_type: "custom".into(),
        command: CommandSpec {
            argv_absolute: argv.clone(),
            argv,
            env: env
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            inputs,
        },
        labels: Vec::new(),
    }
}
