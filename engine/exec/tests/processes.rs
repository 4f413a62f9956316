//! Behaviour that needs separate processes: the test runner's console output, two forge
//! processes on one workspace, and forge killed with SIGKILL in the middle of builds.
//! The test binary re-executes itself (`processes::child_entry`) to play the forge process.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use forge_core::{ArtifactRef, TestSpec};
use forge_exec::{run_tests, ConsoleMode, Executor, SandboxMode};

fn child(mode: &str, ws: &Path) -> Command {
    // The child's temporary directory lives in the workspace the test removes: a child killed
    // with SIGKILL cannot remove the private TMPDIR of the test it was running.
    let tmp = ws.join(".child-tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "--exact",
        // its name in tests/all.rs's one test executable
        "processes::child_entry",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("FORGE_EXEC_CHILD", mode)
    .env("FORGE_EXEC_WS", ws)
    .env("TMPDIR", &tmp)
    .stdin(Stdio::null());
    c
}

fn run_child(mode: &str, ws: &Path, extra_env: &[(&str, &str)]) -> Output {
    let mut c = child(mode, ws);
    c.envs(extra_env.iter().copied());
    c.output().unwrap()
}

fn tests_graph() -> (GraphBuilder, Vec<TestSpec>) {
    let mut g = GraphBuilder::default();
    let fixture = out("t", "fixture", "fixture.txt");
    g.write(label("t", "fixture"), &fixture, "fixture-content", false);
    let broken = out("t", "broken", "b.txt");
    g.run(RunSpec::new(label("t", "broken"), "b", &["/bin/sh", "-c", "exit 1"]).output(&broken));
    let tests = vec![
        test_spec("pass", "echo out-line; echo err-line >&2", &[], Vec::new()),
        test_spec("fail", "echo failing >&2; exit 4", &[], Vec::new()),
        test_spec(
            "env",
            "test \"$(cat $1)\" = fixture-content && test \"$GREETING\" = hello && test -z \"$FORGE_EXEC_LEAK\" && test -n \"$BUCK_BUILD_ID\" && test \"$(pwd -P)\" = \"$(cd \"$(dirname $1)/../../../../../../..\" && pwd -P)\" && env | cut -d= -f1 | sort | tr '\\n' ' '",
            &[("GREETING", "hello")],
            vec![ArtifactRef::Build(fixture)],
        ),
        test_spec("slow", "sleep 5", &[], Vec::new()),
        test_spec("unbuildable", "true", &[], vec![ArtifactRef::Build(broken)]),
    ];
    (g, tests)
}

/// A small graph with run actions (one writing its output in steps), a directory output, a
/// symlinked_dir, a copy, a write and a 2 MB output: enough states to interrupt.
fn reliability_graph() -> (GraphBuilder, Vec<String>) {
    let mut g = GraphBuilder::default();
    let note = out("rel", "r", "note.txt");
    let steps = out("rel", "r", "steps.txt");
    let tree = out("rel", "r", "tree");
    let big = out("rel", "r", "big.bin");
    let links = out("rel", "r", "links");
    let copy = out("rel", "r", "copy.txt");
    g.write(label("rel", "r"), &note, "note\n", false);
    g.run(
        RunSpec::new(
            label("rel", "r"),
            "steps",
            &[
                "/bin/sh",
                "-c",
                "for i in 1 2 3 4; do cat rel/src.txt >> $1; sleep 0.03; done; cat $2 >> $1",
                "--",
                &steps,
                &note,
            ],
        )
        .source("rel/src.txt")
        .input(&note)
        .output(&steps),
    );
    g.run(RunSpec::new(label("rel", "r"), "tree", &["/bin/sh", "-c", "mkdir -p $1/a/b; for i in 1 2 3; do cp $2 $1/a/b/f$i; sleep 0.03; done; echo x > $1/top", "--", &tree, &steps]).input(&steps).dir_output(&tree));
    g.run(
        RunSpec::new(
            label("rel", "r"),
            "big",
            &[
                "/bin/sh",
                "-c",
                "yes \"$(cat $2)\" | head -c 2000000 > $1",
                "--",
                &big,
                &steps,
            ],
        )
        .input(&steps)
        .output(&big),
    );
    g.symlinked_dir(
        label("rel", "r"),
        &links,
        vec![
            ("s.txt", ArtifactRef::Build(steps.clone())),
            ("t", ArtifactRef::Build(tree.clone())),
        ],
    );
    g.copy(
        label("rel", "r"),
        &copy,
        ArtifactRef::Build(format!("{tree}/a/b/f2")),
    );
    (g, vec![note, steps, tree, big, links, copy])
}

/// Content of every output (symlinks as their targets), for byte-for-byte comparison.
fn snapshot(root: &Path, paths: &[String]) -> BTreeMap<String, Vec<u8>> {
    let mut m = BTreeMap::new();
    for p in paths {
        for e in walkdir::WalkDir::new(root.join(p)).sort_by_file_name() {
            let e = e.unwrap();
            let rel = e
                .path()
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            let v = if e.path_is_symlink() {
                let mut v = b"-> ".to_vec();
                v.extend(
                    fs::read_link(e.path())
                        .unwrap()
                        .to_string_lossy()
                        .as_bytes(),
                );
                v
            } else if e.file_type().is_dir() {
                b"<dir>".to_vec()
            } else {
                fs::read(e.path()).unwrap()
            };
            m.insert(rel, v);
        }
    }
    m
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child_entry() {
    let Ok(mode) = std::env::var("FORGE_EXEC_CHILD") else {
        return;
    };
    let ws = PathBuf::from(std::env::var("FORGE_EXEC_WS").unwrap());
    let sandbox = match std::env::var("FORGE_EXEC_SANDBOX").as_deref() {
        Ok("forest") => SandboxMode::SymlinkForest,
        _ => SandboxMode::Bubblewrap,
    };
    let mut opts = options(&ws, sandbox);
    opts.console = match std::env::var("FORGE_EXEC_CONSOLE").as_deref() {
        Ok("fancy") => ConsoleMode::Fancy,
        _ => ConsoleMode::Plain,
    };
    match mode.as_str() {
        "tests" => {
            opts.test_timeout = Some(Duration::from_millis(2000));
            let exec = Executor::new(opts).unwrap();
            let (g, tests) = tests_graph();
            let summary = run_tests(&exec, &g.graph, tests).unwrap();
            std::process::exit(if summary.failed_total() > 0 { 32 } else { 0 });
        }
        "build" | "slow-build" | "tool" | "other" => {
            let (g, paths) = if mode == "build" {
                reliability_graph()
            } else {
                one_step_graph(&mode)
            };
            let exec = Executor::new(opts).unwrap();
            let wanted: Vec<ArtifactRef> = paths.into_iter().map(ArtifactRef::Build).collect();
            match exec.build(&g.graph, &wanted) {
                Ok(r) => {
                    eprintln!(
                        "REPORT local={} cached={} up_to_date={}",
                        r.local, r.cached, r.up_to_date
                    );
                    std::process::exit(0)
                }
                Err(e) => {
                    eprintln!("{e:#}");
                    std::process::exit(3)
                }
            }
        }
        "daemons" => {
            forge_exec::install_signal_handlers();
            let marker = std::env::var("FORGE_TEST_MARKER").unwrap();
            let (g, wanted) = daemons_graph(&marker);
            let exec = Executor::new(opts).unwrap();
            let _ = exec.build(&g.graph, &wanted);
            let spec = test_spec(
                "daemon",
                "sleep 30 & sleep 30",
                &[("FORGE_TEST_MARKER", &marker)],
                Vec::new(),
            );
            let _ = run_tests(&exec, &g.graph, vec![spec]);
            std::process::exit(0)
        }
        // Only starts forge's executor on the workspace (which reaps what a killed one left).
        "start" => {
            Executor::new(opts).unwrap();
            std::process::exit(0)
        }
        other => panic!("unknown child mode {other}"),
    }
}

#[test]
fn test_runner_prints_buck2_lines_and_the_ci_line() {
    let ws = tempfile::tempdir().unwrap();
    let out = run_child(
        "tests",
        ws.path(),
        &[("FORGE_EXEC_LEAK", "should-not-reach-tests")],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(32), "{stderr}");
    // Lines as buck2's simple test console prints them (conformance/test, O10).
    assert!(stderr.contains("✓ Pass: root//t:pass ("), "{stderr}");
    assert!(
        stderr.contains("---- STDOUT ----\nout-line\n---- STDERR ----\nerr-line\n"),
        "{stderr}"
    );
    // buck2 0676d75903 (conformance/test): `✗ Fail: <label> (<duration>)`, nothing more.
    assert!(is_buck2_fail_line(&stderr, "root//t:fail"), "{stderr}");
    assert!(stderr.contains("---- STDERR ----\nfailing\n"), "{stderr}");
    assert!(
        stderr.contains("✓ Pass: root//t:env ("),
        "env allowlist + spec env + BUCK_BUILD_ID: {stderr}"
    );
    assert!(stderr.contains("✗ Timeout: root//t:slow ("), "{stderr}");
    assert!(
        stderr.contains("Action failed: root//t:broken (<unspecified>) (b)"),
        "{stderr}"
    );
    assert!(
        stderr.contains("Tests finished: Pass 2. Fail 1. Timeout 1. Fatal 0. Skip 0. Omit 0. Infra Failure 0. Build failure 1\n3 TESTS FAILED\n  ✗ root//t:fail (<unspecified>)\n  ✗ root//t:slow (<unspecified>)\n  ✗ root//t:unbuildable (<unspecified>)\n"),
        "{stderr}"
    );
    assert_eq!(
        stderr.lines().last(),
        Some("2 passed, 3 failed"),
        "{stderr}"
    );
    // The env test printed the variable names it saw: only the allowlist, the spec's env
    // and buck2's id (PWD is set for the shell).
    let env_line = stderr
        .split("✓ Pass: root//t:env")
        .nth(1)
        .and_then(|s| s.lines().nth(2))
        .unwrap();
    for name in env_line.split_whitespace() {
        assert!(
            [
                "BUCK_BUILD_ID",
                "GREETING",
                "HOME",
                "LOGNAME",
                "PATH",
                "PWD",
                "TMPDIR",
                "USER",
                "XDG_RUNTIME_DIR",
                "SHLVL",
                "OLDPWD",
                "_"
            ]
            .contains(&name),
            "unexpected variable {name} in the test env: {env_line}"
        );
    }
}

/// Actions that each leave a process running in the background (and take a while).
fn daemons_graph(marker: &str) -> (GraphBuilder, Vec<ArtifactRef>) {
    let mut g = GraphBuilder::default();
    let mut wanted = Vec::new();
    for i in 0..6 {
        let name = format!("d{i}");
        let o = out("", &name, "o.txt");
        g.run(
            RunSpec::new(
                label("", &name),
                "d",
                &[
                    "/bin/sh",
                    "-c",
                    "sleep 30 >/dev/null 2>&1 & sleep 0.2; echo x > $1",
                    "--",
                    &o,
                ],
            )
            .env("FORGE_TEST_MARKER", marker)
            .output(&o),
        );
        wanted.push(ArtifactRef::Build(o));
    }
    (g, wanted)
}

fn wait_until_gone(marker: &str, limit: Duration) -> Vec<i32> {
    let deadline = Instant::now() + limit;
    loop {
        let left = processes_with_env(marker);
        if left.is_empty() || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// How long each kill-at-random-moments test goes on killing: a few seconds in the suite
/// (past its minimum of iterations), `FORGE_KILL_TEST_SECS` in the soak variant
/// (`//engine/exec:tests_soak`), which tries many more moments.
fn kill_budget() -> Duration {
    let secs = std::env::var("FORGE_KILL_TEST_SECS").map_or(Ok(6), |s| s.parse::<u64>());
    Duration::from_secs(secs.expect("FORGE_KILL_TEST_SECS: a whole number of seconds"))
}

/// forge killed at random moments — SIGTERM, SIGINT or SIGKILL, during the build or while a
/// test runs — in both sandbox modes: after SIGTERM/SIGINT nothing of the build survives;
/// after SIGKILL nothing survives the next start of forge on the workspace.
#[test]
fn no_process_of_the_build_survives_forge_killed_at_random_moments() {
    let budget = kill_budget();
    let start = Instant::now();
    let mut seed = 0x2545_f491_4f6c_dd1d ^ std::process::id() as u64;
    let mut iterations = 0;
    while start.elapsed() < budget || iterations < 6 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let ws = tempfile::tempdir().unwrap();
        let sandbox = if iterations % 2 == 0 {
            "forest"
        } else {
            "bwrap"
        };
        let signal = [libc::SIGKILL, libc::SIGTERM, libc::SIGINT][(seed % 3) as usize];
        let marker = format!("kill-{}-{iterations}", std::process::id());
        let mut victim = child("daemons", ws.path())
            .env("FORGE_EXEC_SANDBOX", sandbox)
            .env("FORGE_TEST_MARKER", &marker)
            .stderr(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        // The build takes about 0.6 s and the test runs 30 s: kill somewhere in between.
        let delay = Duration::from_millis(100 + (seed >> 8) % 1400);
        std::thread::sleep(delay);
        // SAFETY: signalling the child we started.
        unsafe { libc::kill(victim.id() as i32, signal) };
        victim.wait().unwrap();
        let what = format!("{sandbox}, signal {signal} after {delay:?}");
        if signal != libc::SIGKILL {
            let left = wait_until_gone(&marker, Duration::from_secs(10));
            assert!(left.is_empty(), "{what}: still running: {left:?}");
        }
        let out = child("start", ws.path())
            .env("FORGE_EXEC_SANDBOX", sandbox)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let left = wait_until_gone(&marker, Duration::from_secs(10));
        assert!(left.is_empty(), "{what}: survived the next start: {left:?}");
        iterations += 1;
    }
    eprintln!("{iterations} kills, no process of a build survived");
}

#[test]
fn two_processes_on_one_workspace_take_turns() {
    let ws = tempfile::tempdir().unwrap();
    let a = child("slow-build", ws.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let b = child("slow-build", ws.path())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let a = a.wait_with_output().unwrap();
    let b = b.wait_with_output().unwrap();
    let (ea, eb) = (
        String::from_utf8_lossy(&a.stderr),
        String::from_utf8_lossy(&b.stderr),
    );
    assert!(a.status.success() && b.status.success(), "{ea}\n{eb}");
    // Whichever got the lock first built; the other waited, then found the work done.
    let (first, second) = if ea.contains("REPORT local=1") {
        (&ea, &eb)
    } else {
        (&eb, &ea)
    };
    assert!(first.contains("REPORT local=1"), "{ea}\n{eb}");
    assert!(
        second.contains("forge: waiting for another forge process (pid"),
        "{second}"
    );
    assert!(
        second.contains("REPORT local=0 cached=0 up_to_date=1"),
        "{second}"
    );
    assert_eq!(read(ws.path(), &out("", "slow-build", "o.txt")), "done\n");
}

/// The graphs of the lock tests: `slow-build` sleeps `FORGE_EXEC_SLEEP` seconds (default 1)
/// while holding the lock; `tool` (a written script and a run action over it) and `other`
/// are quick.
fn one_step_graph(mode: &str) -> (GraphBuilder, Vec<String>) {
    let mut g = GraphBuilder::default();
    let o = out("", mode, "o.txt");
    let script = match mode {
        "slow-build" => {
            let secs = std::env::var("FORGE_EXEC_SLEEP").unwrap_or_else(|_| "1".into());
            format!("sleep {secs}; echo done > $1")
        }
        "tool" => {
            let src = out("", "tool", "tool.sh");
            g.write(label("", "tool"), &src, "echo tool\n", true);
            g.run(
                RunSpec::new(
                    label("", "tool"),
                    "t",
                    &["/bin/sh", "-c", "sh $1 > $2", "--", &src, &o],
                )
                .input(&src)
                .output(&o),
            );
            return (g, vec![o]);
        }
        _ => "echo other > $1".to_string(),
    };
    g.run(RunSpec::new(label("", mode), "s", &["/bin/sh", "-c", &script, "--", &o]).output(&o));
    (g, vec![o])
}

/// Polls until a forge process has taken the workspace lock (it writes its pid into it).
fn wait_for_lock_holder(ws: &Path, pid: u32) {
    let lock = ws.join("buck-out/forge/lock");
    let start = Instant::now();
    while fs::read_to_string(&lock).unwrap_or_default() != pid.to_string() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "pid {pid} never took {lock:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn an_up_to_date_build_does_not_wait_for_the_lock_and_one_with_work_does() {
    let ws = tempfile::tempdir().unwrap();
    let first = run_child("tool", ws.path(), &[]);
    let first_err = String::from_utf8_lossy(&first.stderr);
    assert!(
        first.status.success() && first_err.contains("REPORT local=1"),
        "{first_err}"
    );
    let mut holder = child("slow-build", ws.path())
        .env("FORGE_EXEC_SLEEP", "8")
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_lock_holder(ws.path(), holder.id());

    // Everything `tool` needs is built: it proceeds while the holder still builds.
    let quick = run_child("tool", ws.path(), &[]);
    let quick_err = String::from_utf8_lossy(&quick.stderr);
    assert!(quick.status.success(), "{quick_err}");
    assert!(
        quick_err.contains("REPORT local=0 cached=0 up_to_date=2"),
        "{quick_err}"
    );
    assert!(!quick_err.contains("waiting"), "{quick_err}");
    assert!(
        holder.try_wait().unwrap().is_none(),
        "the holder ended before `tool` did"
    );

    // `other` has an action to run: it waits for the holder, then runs it.
    let busy = run_child("other", ws.path(), &[]);
    let busy_err = String::from_utf8_lossy(&busy.stderr);
    let holder_done = holder.try_wait().unwrap();
    assert!(busy.status.success(), "{busy_err}");
    let waiting = format!(
        "forge: waiting for another forge process (pid {})",
        holder.id()
    );
    assert!(busy_err.contains(&waiting), "{busy_err}");
    assert!(busy_err.contains("REPORT local=1"), "{busy_err}");
    assert!(
        holder_done.is_some_and(|s| s.success()),
        "`other` ran before the holder ended"
    );
    assert_eq!(read(ws.path(), &out("", "tool", "o.txt")), "tool\n");
    assert_eq!(read(ws.path(), &out("", "other", "o.txt")), "other\n");
}

#[test]
fn kill_9_at_random_moments_never_leaves_a_trusted_wrong_output() {
    let (_, paths) = reliability_graph();
    let variants = ["alpha\n", "beta-longer\n"];
    // Reference outputs: one clean build per source variant.
    let mut reference = Vec::new();
    let mut clean_time = Duration::ZERO;
    for v in variants {
        let ws = tempfile::tempdir().unwrap();
        write_file(ws.path(), "rel/src.txt", v);
        let t = Instant::now();
        let out = run_child("build", ws.path(), &[]);
        clean_time = clean_time.max(t.elapsed());
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        reference.push(snapshot(ws.path(), &paths));
    }
    let ws = tempfile::tempdir().unwrap();
    let budget = kill_budget();
    let start = Instant::now();
    let mut seed =
        start.elapsed().as_nanos() as u64 ^ 0x9e37_79b9_7f4a_7c15 ^ std::process::id() as u64;
    let mut iterations = 0;
    while start.elapsed() < budget || iterations < 5 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let v = (seed % 2) as usize;
        write_file(ws.path(), "rel/src.txt", variants[v]);
        let delay = Duration::from_micros(seed % (clean_time.as_micros() as u64 + 1));
        let mut victim = child("build", ws.path())
            .stderr(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(delay);
        victim.kill().unwrap(); // SIGKILL
        victim.wait().unwrap();
        let out = run_child("build", ws.path(), &[]);
        assert!(
            out.status.success(),
            "iteration {iterations}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            snapshot(ws.path(), &paths),
            reference[v],
            "iteration {iterations} (killed after {delay:?})"
        );
        iterations += 1;
    }
    eprintln!("{iterations} kill -9 iterations, all outputs identical to clean builds");
    assert!(iterations >= 5);
}

/// Whether `stderr` has the line `✗ Fail: <label> (<n>.<n>s)` exactly.
fn is_buck2_fail_line(stderr: &str, label: &str) -> bool {
    stderr.lines().any(|l| {
        l.strip_prefix(&format!("✗ Fail: {label} ("))
            .and_then(|rest| rest.strip_suffix("s)"))
            .is_some_and(|secs| secs.parse::<f64>().is_ok())
    })
}
