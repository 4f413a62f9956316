//! The grid restarted during a build the way the guide says: Ctrl-C on `forge run
//! //...:grid -- serve --dir D --port P`, then the same command again, in the same workspace,
//! while `forge build` (which holds the workspace lock) waits on a remote action. The second
//! `forge run` finds its tool up to date and does not wait for the lock, so the grid is back
//! within the build's resume window, and the build finishes with the action's output.
//!
//! The project's `//remote:grid` is a `cargo_binary`; here the scratch project's `//pkg:grid`
//! is a script (a `write` action, so the run has an action to find up to date) that starts this
//! test binary as the grid (`grid_entry`: forge-re-grid's `serve` on the same library).

mod common;

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{walk, Worker};

const RULES: &str = r#"def _slow_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("slow.txt")
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", "sleep 25 && echo survived > \"$0\"", out.as_output()),
        category = "slow",
    )
    return [DefaultInfo(default_output = out)]

slow = rule(impl = _slow_impl, attrs = {})

def _tool_impl(ctx: AnalysisContext) -> list[Provider]:
    script = ctx.actions.write("grid.sh", ctx.attrs.script, is_executable = True)
    return [DefaultInfo(default_output = script), RunInfo(args = cmd_args(script))]

tool = rule(impl = _tool_impl, attrs = {"script": attrs.string()})
"#;

/// The engine under test, found as forge_build.rs finds it.
fn forge_bin() -> PathBuf {
    if let Some(p) = std::env::var_os("FORGE_BIN") {
        return p.into();
    }
    let target = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target");
    let exe = std::env::current_exe().unwrap();
    let beside = exe.parent().and_then(Path::parent).map(|d| d.join("forge"));
    [
        Some(target.join("release/forge")),
        Some(target.join("debug/forge")),
        beside,
    ]
    .into_iter()
    .flatten()
    .filter_map(|p| Some((std::fs::metadata(&p).ok()?.modified().ok()?, p)))
    .max()
    .map(|(_, p)| p)
    .unwrap_or_else(|| panic!("no forge binary in {} (set FORGE_BIN)", target.display()))
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

/// Plays `forge-re-grid serve --dir D --port P` when started by the scratch `//pkg:grid`.
#[test]
#[ignore = "entry point of the grid the test starts through forge run"]
fn grid_entry() {
    let Ok(args) = std::env::var("FORGE_TEST_GRID_ARGS") else {
        return;
    };
    let words: Vec<&str> = args.split_whitespace().collect();
    let value = |flag: &str| {
        let at = words.iter().position(|w| *w == flag).unwrap();
        words[at + 1].to_string()
    };
    assert_eq!(words.first(), Some(&"serve"), "{args}");
    for sig in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: the handler only stores to an atomic.
        unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut grid = forge_re_grid::Grid::start(&forge_re_grid::Options {
        dir: value("--dir").into(),
        host: "127.0.0.1".to_string(),
        port: Some(value("--port").parse().unwrap()),
        keepalive_timeout: 4,
        postgres: None,
        bgd: Some(forge_re_grid::tools::bgd(None, &root).unwrap()),
        extra_match_keys: vec!["test".to_string()],
        cache_only: false,
        cancel: Some(&STOP),
    })
    .unwrap_or_else(|e| panic!("{e:#}"));
    while !STOP.load(Ordering::SeqCst) && grid.exited().is_none() {
        std::thread::sleep(Duration::from_millis(100));
    }
    grid.stop();
}

fn workspace(port: u16) -> tempfile::TempDir {
    let dir = tempfile::Builder::new()
        .prefix("forge-re-restart-")
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
            "[cells]\n  root = .\n\n[buildfile]\n  name = BUCK\n\n[build]\n  execution_platforms = root//platforms:platforms\n\n[ci]\n  remote_exec = true\n\n[fpga]\n  toolchain = grid-restart\n\n[buck2_re_client]\n  address = grpc://127.0.0.1:{port}\n  tls = false\n"
        ),
    )
    .unwrap();
    std::fs::write(root.join("rules/defs.bzl"), RULES).unwrap();
    let exe = std::env::current_exe().unwrap();
    let script = format!(
        "#!/bin/sh\\nFORGE_TEST_GRID_ARGS=\\\"$*\\\" exec {} --exact grid_entry --ignored --nocapture --test-threads=1\\n",
        exe.display()
    );
    std::fs::write(
        root.join("pkg/BUCK"),
        format!(
            "load(\"//rules:defs.bzl\", \"slow\", \"tool\")\n\nslow(name = \"slow\")\n\ntool(name = \"grid\", script = \"{script}\")\n"
        ),
    )
    .unwrap();
    dir
}

/// A process group this test started (forge and what it runs), killed if the test fails.
struct Group(Option<Child>);

impl Group {
    fn id(&self) -> i32 {
        self.0.as_ref().expect("running").id() as i32
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            // SAFETY: signals the process group we created; Ctrl-C lets the grid stop its
            // PostgreSQL, then nothing of the group may stay.
            unsafe { libc::kill(-(c.id() as i32), libc::SIGINT) };
            std::thread::sleep(Duration::from_secs(3));
            unsafe { libc::kill(-(c.id() as i32), libc::SIGKILL) };
            let _ = c.wait();
        }
    }
}

/// `forge run //pkg:grid -- serve --dir D --port P`, the guide's command, as its own process
/// group (what Ctrl-C in its terminal stops); waits until the grid is up.
fn serve(ws: &Path, dir: &Path, port: u16, log: &Path) -> Group {
    let child = Command::new(forge_bin())
        .args(["run", "//pkg:grid", "--", "serve", "--dir"])
        .arg(dir)
        .args(["--port", &port.to_string()])
        .current_dir(ws)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .process_group(0)
        .spawn()
        .unwrap();
    let mut child = Group(Some(child));
    let started = Instant::now();
    while !dir.join("address").exists() {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        let ended = child.0.as_mut().unwrap().try_wait().unwrap();
        assert!(ended.is_none(), "serve ended:\n{text}");
        assert!(
            started.elapsed() < Duration::from_secs(150),
            "the grid did not come up:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    child
}

/// Ctrl-C in the terminal of `serve`: SIGINT to its process group; waits until it is down:
/// every process of the group gone (the grid stops its PostgreSQL and BuildGrid before it
/// exits, while `forge run` may end first), not only the group's leader.
fn interrupt(mut serve: Group, dir: &Path) {
    let group = serve.id();
    // SAFETY: signals the process group we created.
    unsafe { libc::kill(-group, libc::SIGINT) };
    serve.0.take().unwrap().wait().unwrap();
    let started = Instant::now();
    // SAFETY: signal 0 only asks whether the group still has a member.
    while unsafe { libc::kill(-group, 0) } == 0 && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
    let started = Instant::now();
    while dir.join("address").exists() && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(100));
    }
}

#[test]
fn the_grid_restarted_with_forge_run_during_a_build_loses_nothing() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let ws = workspace(port);
    let dir = ws.path().join("grid-state");
    let first = serve(ws.path(), &dir, port, &ws.path().join("serve-1.log"));
    let worker = Worker::start_at(
        &format!("grpc://127.0.0.1:{port}"),
        ws.path(),
        "grid-restart",
        0,
        &["fpga-tools=grid-restart"],
        &[],
        &[],
    );
    let build_log = ws.path().join("build.log");
    let mut build = Group(Some(
        Command::new(forge_bin())
            .args(["build", "//pkg:slow", "--show-output"])
            .current_dir(ws.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&build_log).unwrap())
            .process_group(0)
            .spawn()
            .unwrap(),
    ));
    let started = Instant::now();
    while worker.leases_run() == 0 {
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "the worker never got the action:\n{}\n{}",
            std::fs::read_to_string(&build_log).unwrap_or_default(),
            worker.log_text()
        );
        std::thread::sleep(Duration::from_millis(200));
    }

    interrupt(first, &dir);
    let second_log = ws.path().join("serve-2.log");
    let second = serve(ws.path(), &dir, port, &second_log);
    let second_text = std::fs::read_to_string(&second_log).unwrap();
    assert!(
        build.0.as_mut().unwrap().try_wait().unwrap().is_none(),
        "the build ended before the grid was back:\n{}",
        std::fs::read_to_string(&build_log).unwrap_or_default()
    );
    assert!(
        !second_text.contains("waiting for another forge"),
        "{second_text}"
    );

    let status = build.0.take().unwrap().wait().unwrap();
    let text = std::fs::read_to_string(&build_log).unwrap();
    interrupt(second, &dir);
    assert!(status.success(), "the build failed:\n{text}");
    let out = ws
        .path()
        .join("buck-out/forge/art/root/1ef78538d8598cb2/pkg/__slow__/slow.txt");
    assert_eq!(
        std::fs::read_to_string(out).unwrap(),
        "survived\n",
        "{text}"
    );
    drop(worker);
    remove_workspace(ws);
}

/// Removes the scratch workspace once the run's processes are gone, retrying while one that
/// is still going down writes into it (the grid's PostgreSQL after its fast shutdown, the
/// worker's sandbox), and names what stays if it will not go.
fn remove_workspace(ws: tempfile::TempDir) {
    let path = ws.keep();
    let started = Instant::now();
    while let Err(e) = std::fs::remove_dir_all(&path) {
        if started.elapsed() > Duration::from_secs(30) {
            let left: Vec<_> = walk(&path);
            panic!(
                "{} stays 30 s after the test: {e}; left: {left:?}",
                path.display()
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
