//! `forge build -c ci.remote_exec=true` of a scratch project on the shared BuildGrid: the
//! remote action's output equals the same build's with remote execution off, the
//! `local_only` action stays local, the summary counts the remote one, and a clean rebuild
//! comes from the action cache without running on the worker. The remote action writes
//! through `$BUCK_SCRATCH_PATH`, which the worker makes as the local sandbox does.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{server, walk, Worker};

const RULES: &str = r#"def _gen_impl(ctx: AnalysisContext) -> list[Provider]:
    a = ctx.actions.declare_output("a.txt")
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", "echo \"$1\" > \"$0\"", a.as_output(), ctx.attrs.word),
        category = "gen_a",
        local_only = True,
    )
    b = ctx.actions.declare_output("b.txt")
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", "tr a-z A-Z < \"$1\" > \"$BUCK_SCRATCH_PATH/up\"; cat \"$BUCK_SCRATCH_PATH/up\" > \"$0\"; seq 1 300 | sha256sum >> \"$0\"", b.as_output(), a),
        category = "gen_b",
    )
    return [DefaultInfo(default_output = b)]

gen = rule(impl = _gen_impl, attrs = {"word": attrs.string()})

# A tool bound to this machine's environment (a `[forge] sandbox_passthrough` dir) and the
# toolchain's word that its actions run here, as the FINN and Python toolchains give it.
EnvToolInfo = provider(fields = {"local_only": provider_field(bool), "tool": provider_field(RunInfo)})

def _env_tool_impl(ctx: AnalysisContext) -> list[Provider]:
    return [DefaultInfo(), EnvToolInfo(local_only = True, tool = RunInfo(args = cmd_args("/bin/sh", "tools/hello.sh")))]

env_tool = rule(impl = _env_tool_impl, attrs = {})

def _passthrough_impl(ctx: AnalysisContext) -> list[Provider]:
    tool = ctx.attrs.tool[EnvToolInfo]
    out = ctx.actions.declare_output("from_tools.txt")
    ctx.actions.run(
        cmd_args(tool.tool, out.as_output()),
        category = "uses_passthrough",
        local_only = tool.local_only,
    )
    return [DefaultInfo(default_output = out)]

uses_passthrough = rule(impl = _passthrough_impl, attrs = {"tool": attrs.dep(providers = [EnvToolInfo])})
"#;

/// The engine under test: `FORGE_BIN`, else the newest `forge` of the workspace's cargo
/// target dir (`./forge` builds `target/release/forge` from this tree before it runs the
/// tests; `cargo build -p forge` makes `target/debug/forge`).
fn forge_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("FORGE_BIN") {
        return p.into();
    }
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target");
    let exe = std::env::current_exe().unwrap();
    let beside = exe.parent().and_then(Path::parent).map(|d| d.join("forge"));
    let newest = [
        Some(target.join("release/forge")),
        Some(target.join("debug/forge")),
        beside,
    ]
    .into_iter()
    .flatten()
    .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
    .max();
    match newest {
        Some((_, p)) => p,
        None => panic!(
            "no forge binary in {} (build it, or set FORGE_BIN)",
            target.display()
        ),
    }
}

fn workspace(remote_exec: bool, address: &str) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("forge-re-ws-")
        .tempdir()
        .unwrap();
    let root = dir.path();
    let project = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for d in ["rules", "pkg", "platforms"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    for f in ["BUCK", "defs.bzl"] {
        std::fs::copy(
            project.join("platforms").join(f),
            root.join("platforms").join(f),
        )
        .unwrap();
    }
    std::fs::write(root.join(".buckroot"), "").unwrap();
    std::fs::write(
        root.join(".buckconfig"),
        format!(
            "[cells]\n  root = .\n\n[buildfile]\n  name = BUCK\n\n[build]\n  execution_platforms = root//platforms:platforms\n\n[ci]\n  remote_exec = {remote_exec}\n\n[buck2_re_client]\n  address = {address}\n  tls = false\n"
        ),
    )
    .unwrap();
    std::fs::write(root.join("rules/defs.bzl"), RULES).unwrap();
    std::fs::write(
        root.join("pkg/BUCK"),
        "load(\"//rules:defs.bzl\", \"gen\")\n\ngen(name = \"g\", word = \"hello\")\n",
    )
    .unwrap();
    dir
}

fn build(root: &Path) -> String {
    let (ok, text) = build_with(root, &[]);
    assert!(ok, "forge build failed:\n{text}");
    text
}

/// `forge build //pkg:g` with extra arguments: whether it succeeded, and its output.
fn build_with(root: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(forge_bin())
        .args(["build", "//pkg:g", "--show-output"])
        .args(args)
        .current_dir(root)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn output_of(root: &Path) -> Vec<u8> {
    let found: Vec<_> = walk(&root.join("buck-out"))
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "b.txt"))
        .collect();
    assert_eq!(found.len(), 1, "{found:?}");
    std::fs::read(&found[0]).unwrap()
}

#[test]
fn forge_builds_remotely_what_it_builds_locally() {
    let server = server();
    let worker = Worker::start_with(server, "forge", 0, &["fpga-tools=sim"]);
    let remote = workspace(true, &server.address());
    let text = build(remote.path());
    assert!(
        text.contains("Commands: 2 (cached: 0, remote: 1, local: 1)"),
        "summary:\n{text}"
    );
    assert_eq!(worker.leases_run(), 1, "worker log:\n{}", worker.log_text());
    let local = workspace(false, &server.address());
    let local_text = build(local.path());
    assert!(local_text.contains("remote: 0, local: 2"), "{local_text}");
    assert_eq!(output_of(remote.path()), output_of(local.path()));

    // A clean checkout state: the remote action comes from the action cache, not the worker.
    std::fs::remove_dir_all(remote.path().join("buck-out")).unwrap();
    let again = build(remote.path());
    assert!(again.contains("local: 1"), "{again}");
    assert_eq!(worker.leases_run(), 1, "executed again:\n{again}");
    assert_eq!(output_of(remote.path()), output_of(local.path()));
}

/// An action whose properties no worker offers (`fpga-tools=vitis`: the other test's worker
/// offers `sim`) fails once `[build] remote_execution_cancel_on_estimated_queue_time_exceeds_s` has
/// passed, naming the properties, and its operation is cancelled: a matching worker that
/// connects afterwards runs nothing.
#[test]
fn an_action_no_worker_offers_fails_after_the_queue_limit() {
    let server = server();
    let ws = workspace(true, &server.address());
    let started = std::time::Instant::now();
    let (ok, text) = build_with(
        ws.path(),
        &[
            "-c",
            "fpga.toolchain=vitis",
            "-c",
            "build.remote_execution_cancel_on_estimated_queue_time_exceeds_s=3",
        ],
    );
    let took = started.elapsed();
    assert!(!ok, "the build succeeded:\n{text}");
    for want in [
        "waited more than 3 s in the remote execution queue and no worker took it",
        "remote_execution_cancel_on_estimated_queue_time_exceeds_s",
        "OSFamily=linux, fpga-tools=vitis",
        "--property OSFamily=linux --property fpga-tools=vitis",
        "was cancelled",
    ] {
        assert!(text.contains(want), "no `{want}` in:\n{text}");
    }
    assert!(
        took < std::time::Duration::from_secs(30),
        "failed after {took:?}"
    );
    let vitis = Worker::start_with(server, "queue-vitis", 0, &["fpga-tools=vitis"]);
    std::thread::sleep(std::time::Duration::from_secs(4));
    assert_eq!(
        vitis.leases_run(),
        0,
        "the cancelled action ran:\n{}",
        vitis.log_text()
    );
}

/// forge interrupted (SIGINT) while its remote action waits for a worker cancels the
/// operation before it exits, and says so: a matching worker that connects afterwards runs
/// nothing. (No worker offers `fpga-tools=interrupt` until then, so the action stays queued.)
#[test]
fn an_interrupted_build_cancels_its_remote_operation() {
    let server = server();
    let ws = workspace(true, &server.address());
    let log = tempfile::NamedTempFile::new().unwrap();
    let mut forge = Command::new(forge_bin())
        .args(["build", "//pkg:g", "-c", "fpga.toolchain=interrupt"])
        .current_dir(ws.path())
        .stdin(Stdio::null())
        .stderr(log.reopen().unwrap())
        .spawn()
        .unwrap();
    // The local action `gen_a` done, the remote one is uploaded and queued within moments.
    let started = std::time::Instant::now();
    while !walk(&ws.path().join("buck-out"))
        .iter()
        .any(|p| p.ends_with("a.txt"))
    {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(120),
            "gen_a never ran:\n{}",
            std::fs::read_to_string(log.path()).unwrap_or_default()
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::thread::sleep(std::time::Duration::from_secs(3));
    // SAFETY: signals the child we started.
    unsafe { libc::kill(forge.id() as i32, libc::SIGINT) };
    let status = forge.wait().unwrap();
    let text = std::fs::read_to_string(log.path()).unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(status.signal(), Some(libc::SIGINT), "{status:?}:\n{text}");
    assert!(
        text.contains("forge: interrupted; cancelled the remote operations "),
        "no cancellation reported:\n{text}"
    );
    let late = Worker::start_with(server, "interrupt", 0, &["fpga-tools=interrupt"]);
    std::thread::sleep(std::time::Duration::from_secs(5));
    assert_eq!(
        late.leases_run(),
        0,
        "the interrupted build's action ran:\n{}",
        late.log_text()
    );
}

/// buck2's rule: on a platform with `local_enabled = False` a `local_only` action has
/// nowhere to run, and the build says so instead of running it locally.
#[test]
fn a_local_only_action_on_a_remote_only_platform_is_an_error() {
    let server = server();
    let ws = workspace(true, &server.address());
    std::fs::write(
        ws.path().join("platforms/defs.bzl"),
        r#"def _impl(ctx: AnalysisContext) -> list[Provider]:
    platform = ExecutionPlatformInfo(
        label = ctx.label.raw_target(),
        configuration = ConfigurationInfo(constraints = {}, values = {}),
        executor_config = CommandExecutorConfig(
            local_enabled = False,
            remote_enabled = True,
            remote_execution_properties = {"OSFamily": "linux"},
            remote_execution_use_case = "buck2-default",
        ),
    )
    return [DefaultInfo(), ExecutionPlatformRegistrationInfo(platforms = [platform])]

platforms = rule(impl = _impl, attrs = {})
"#,
    )
    .unwrap();
    std::fs::write(
        ws.path().join("platforms/BUCK"),
        "load(\":defs.bzl\", \"platforms\")\n\nplatforms(name = \"platforms\")\n",
    )
    .unwrap();
    let (ok, text) = build_with(ws.path(), &[]);
    assert!(!ok, "the build succeeded:\n{text}");
    for want in ["gen_a", "local_only = True", "local_enabled = False"] {
        assert!(text.contains(want), "no `{want}` in:\n{text}");
    }
}

/// An action whose tool lives in a `[forge] sandbox_passthrough` path reads what a worker
/// would not have (only declared inputs travel); its toolchain says so (`local_only`, buck2's
/// own flag: the engine reads no command line), so with remote execution on it runs locally.
#[test]
fn an_environment_bound_toolchains_action_runs_locally() {
    let server = server();
    let _worker = Worker::start_with(server, "passthrough", 0, &["fpga-tools=sim"]);
    let ws = workspace(true, &server.address());
    let root = ws.path();
    let config = std::fs::read_to_string(root.join(".buckconfig")).unwrap();
    std::fs::write(
        root.join(".buckconfig"),
        format!("{config}\n[forge]\n  sandbox_passthrough = tools\n"),
    )
    .unwrap();
    std::fs::create_dir_all(root.join("tools")).unwrap();
    std::fs::write(root.join("tools/hello.sh"), "echo from tools > \"$1\"\n").unwrap();
    std::fs::write(
        root.join("pkg/BUCK"),
        "load(\"//rules:defs.bzl\", \"env_tool\", \"uses_passthrough\")\n\n\
         env_tool(name = \"tool\")\n\nuses_passthrough(name = \"g\", tool = \":tool\")\n",
    )
    .unwrap();
    let text = build(root);
    assert!(
        text.contains("Commands: 1 (cached: 0, remote: 0, local: 1)"),
        "{text}"
    );
    let found: Vec<_> = walk(&root.join("buck-out"))
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "from_tools.txt"))
        .collect();
    assert_eq!(std::fs::read(&found[0]).unwrap(), b"from tools\n");
}
