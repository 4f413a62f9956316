//! The persistent sandbox (forge's default): what one action leaves behind never reaches the
//! next action of the same worker, the action holds no capability, and the worker's own
//! failures (killed between actions, killed while an action runs) end in a restarted worker
//! or a clear error, never in a hung build or a stray process.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use crate::common::*;
use forge_core::ArtifactRef;
use forge_exec::{BuildFailed, Executor, SandboxMode};

fn one_worker(root: &Path) -> Executor {
    let mut o = options(root, SandboxMode::Bubblewrap);
    o.jobs = 1;
    Executor::new(o).unwrap()
}

fn failure_text(err: &anyhow::Error) -> String {
    err.downcast_ref::<BuildFailed>()
        .map(|f| f.to_string())
        .unwrap_or_else(|| format!("{err:#}"))
}

fn cmdline(pid: i32) -> Vec<String> {
    fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

fn pids() -> Vec<i32> {
    fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_string_lossy().parse().ok())
        .collect()
}

fn parent(pid: i32) -> i32 {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    stat.rfind(')')
        .and_then(|i| stat[i + 2..].split_whitespace().nth(1)?.parse().ok())
        .unwrap_or(0)
}

/// The worker servers (inside bubblewrap) of the workspace at `root`, by their command line
/// (an action's init process is a fork of its worker, with the same command line, whose
/// parent is the worker rather than bubblewrap).
fn workers_of(root: &Path) -> Vec<i32> {
    let root = root.to_string_lossy().into_owned();
    pids()
        .into_iter()
        .filter(|&p| {
            let args = cmdline(p);
            args.iter().any(|a| a == "--serve")
                && args.windows(2).any(|w| w[0] == "--root" && w[1] == root)
                && !args[0].ends_with("bwrap")
                && cmdline(parent(p))
                    .first()
                    .is_some_and(|a| a.ends_with("bwrap"))
        })
        .collect()
}

/// Kills the workspace's workers (SIGKILL, as the out-of-memory killer would); their pids.
fn kill_workers(root: &Path) -> Vec<i32> {
    let workers = workers_of(root);
    for w in &workers {
        // SAFETY: signalling a process of this test's workspace.
        unsafe { libc::kill(*w, libc::SIGKILL) };
    }
    workers
}

fn wait_for(what: &str, limit: Duration, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !ready() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn canonical_tempdir() -> (tempfile::TempDir, PathBuf) {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path().canonicalize().unwrap();
    (ws, root)
}

/// Two actions on one worker: the first fills `/tmp`, `/dev/shm` and a SysV message queue,
/// the second must find all three empty (each action gets them fresh, as a bubblewrap of
/// its own gives them), and both run with the project root as their working directory.
#[test]
fn consecutive_actions_of_one_worker_share_nothing() {
    assert!(bwrap_available(), "{BWRAP_MISSING}");
    let (_ws, root) = canonical_tempdir();
    let a = out("", "a", "a.txt");
    let b = out("", "b", "b.txt");
    let mut g = GraphBuilder::default();
    g.run(
        RunSpec::new(
            label("", "a"),
            "a",
            &[
                "/bin/sh",
                "-c",
                "echo left > /tmp/left && echo left > /dev/shm/left && ipcmk -Q >/dev/null && pwd -P > $1",
                "--",
                &a,
            ],
        )
        .output(&a),
    );
    g.run(
        RunSpec::new(
            label("", "b"),
            "b",
            &[
                "/bin/sh",
                "-c",
                "{ ls -A /tmp; ls -A /dev/shm; ipcs -q | grep -c '^0x' ; pwd -P; } > $1",
                "--",
                &b,
            ],
        )
        .input(&a)
        .output(&b),
    );
    let exec = one_worker(&root);
    assert_eq!(exec.sandbox_name(), "bubblewrap");
    exec.build(&g.graph, &[ArtifactRef::Build(b.clone())])
        .unwrap();
    let root_s = root.to_string_lossy();
    assert_eq!(read(&root, &a), format!("{root_s}\n"));
    // /tmp may hold the path down to the project root when the project lives under /tmp.
    let listing = read(&root, &b);
    let lines: Vec<&str> = listing.lines().collect();
    assert!(!listing.contains("left"), "{listing}");
    assert_eq!(
        lines[lines.len() - 2],
        "0",
        "a message queue survived: {listing}"
    );
    assert_eq!(lines[lines.len() - 1], root_s, "{listing}");
}

/// The command holds no capability (the worker needs CAP_SYS_ADMIN to build its view; the
/// action must not be able to undo that view): the kernel's own account in
/// `/proc/self/status`, and a mount attempt that the kernel refuses.
#[test]
fn actions_hold_no_capability() {
    assert!(bwrap_available(), "{BWRAP_MISSING}");
    let (_ws, root) = canonical_tempdir();
    write_file(&root, "secret.txt", "undeclared\n");
    let o = out("", "caps", "o.txt");
    let script = format!(
        "grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs)' /proc/self/status > $1; \
         umount -l {r} 2>/dev/null && echo unmounted >> $1; \
         cat {r}/secret.txt >> $1 2>/dev/null; \
         unshare -m true 2>/dev/null && echo unshared >> $1; true",
        r = root.display()
    );
    let mut g = GraphBuilder::default();
    g.run(
        RunSpec::new(
            label("", "caps"),
            "c",
            &["/bin/sh", "-c", &script, "--", &o],
        )
        .output(&o),
    );
    one_worker(&root)
        .build(&g.graph, &[ArtifactRef::Build(o.clone())])
        .unwrap();
    let zero = "0000000000000000";
    assert_eq!(
        read(&root, &o),
        format!(
            "CapInh:\t{zero}\nCapPrm:\t{zero}\nCapEff:\t{zero}\nCapBnd:\t{zero}\nCapAmb:\t{zero}\nNoNewPrivs:\t1\n"
        )
    );
}

/// A daemon that leaves the action's process group and session (`setsid`, as a real daemon
/// does) still dies with the action, in both bubblewrap modes, before the action's end is
/// reported. (Without forge's wait for a fresh bubblewrap's PID 1 this failed about one run
/// in eight on a loaded machine: the teardown is quick, the window small.)
#[test]
fn a_daemon_that_calls_setsid_dies_with_its_action() {
    assert!(bwrap_available(), "{BWRAP_MISSING}");
    for mode in [SandboxMode::Bubblewrap, SandboxMode::BubblewrapPerAction] {
        let (_ws, root) = canonical_tempdir();
        let marker = format!("setsid-{}-{mode:?}", std::process::id());
        let o = out("", "d", "o.txt");
        let mut g = GraphBuilder::default();
        g.run(
            RunSpec::new(
                label("", "d"),
                "d",
                &[
                    "/bin/sh",
                    "-c",
                    "setsid sh -c 'sleep 60' </dev/null >/dev/null 2>&1 & sleep 0.2; echo started > $1",
                    "--",
                    &o,
                ],
            )
            .env("FORGE_TEST_MARKER", &marker)
            .output(&o),
        );
        let mut opts = options(&root, mode);
        opts.jobs = 1;
        let exec = Executor::new(opts).unwrap();
        exec.build(&g.graph, &[ArtifactRef::Build(o)]).unwrap();
        // Both modes report an action's end only after its PID namespace is gone: the
        // persistent sandbox's worker waits for the action's PID 1, forge waits for a fresh
        // bubblewrap's PID 1 (which outlives bubblewrap's own exit) through a pidfd.
        let left = processes_with_env(&marker);
        assert_eq!(left, Vec::<i32>::new(), "{mode:?}");
    }
}

/// The worker is killed between two actions of one build: the next action finds it dead
/// before it takes the action, starts a new one and runs there; the build succeeds.
#[test]
fn a_worker_killed_between_actions_is_replaced() {
    assert!(bwrap_available(), "{BWRAP_MISSING}");
    let (_ws, root) = canonical_tempdir();
    let marker = format!("between-{}", std::process::id());
    // The second action's input takes a while to digest, which holds it back between the
    // first action's end and its own start: that is when the test kills the worker.
    let big = root.join("big.bin");
    fs::File::create(&big).unwrap().set_len(512 << 20).unwrap();
    let first = out("", "first", "o.txt");
    let second = out("", "second", "o.txt");
    let mut g = GraphBuilder::default();
    g.run(
        RunSpec::new(
            label("", "first"),
            "c",
            &["/bin/sh", "-c", "echo x > $1", "--", &first],
        )
        .env("FORGE_TEST_MARKER", &marker)
        .output(&first),
    );
    g.run(
        RunSpec::new(
            label("", "second"),
            "c",
            &["/bin/sh", "-c", "cat $2 > $1", "--", &second, &first],
        )
        .input(&first)
        .source("big.bin")
        .output(&second),
    );
    let exec = one_worker(&root);
    let killer = {
        let root = root.clone();
        std::thread::spawn(move || {
            let done = root.join(out("", "first", "o.txt"));
            wait_for("the first action", Duration::from_secs(30), || {
                done.exists()
            });
            kill_workers(&root)
        })
    };
    let report = exec
        .build(&g.graph, &[ArtifactRef::Build(second.clone())])
        .unwrap();
    let killed = killer.join().unwrap();
    assert_eq!(
        killed.len(),
        1,
        "one worker serves a one-job build: {killed:?}"
    );
    assert_eq!(report.local, 2);
    assert_eq!(read(&root, &second), "x\n");
}

/// The worker is killed while an action runs: the action fails with an error that names
/// the sandbox's death, its processes are gone, and a later build works.
#[test]
fn a_worker_killed_during_an_action_fails_it_clearly() {
    assert!(bwrap_available(), "{BWRAP_MISSING}");
    let (_ws, root) = canonical_tempdir();
    let marker = format!("during-{}", std::process::id());
    let o = out("", "slow", "o.txt");
    let mut g = GraphBuilder::default();
    g.run(
        RunSpec::new(
            label("", "slow"),
            "s",
            &["/bin/sh", "-c", "sleep 30; echo x > $1", "--", &o],
        )
        .env("FORGE_TEST_MARKER", &marker)
        .output(&o),
    );
    let exec = one_worker(&root);
    let wanted = [ArtifactRef::Build(o.clone())];
    let killer = {
        let root = root.clone();
        let marker = marker.clone();
        std::thread::spawn(move || {
            wait_for("the action to run", Duration::from_secs(20), || {
                !processes_with_env(&marker).is_empty()
            });
            kill_workers(&root).len()
        })
    };
    let start = Instant::now();
    let err = exec.build(&g.graph, &wanted).unwrap_err();
    assert_eq!(killer.join().unwrap(), 1);
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "the build waited for the action"
    );
    let text = failure_text(&err);
    assert!(
        text.contains("Action failed: root//:slow (<unspecified>) (s)")
            && text.contains("The persistent sandbox running the command died"),
        "{text}"
    );
    assert!(!root.join(&o).exists(), "no output after the failure");
    wait_for(
        "the action's processes to end",
        Duration::from_secs(5),
        || processes_with_env(&marker).is_empty(),
    );
    // The next build starts a new worker (the slow action is replaced by a quick one).
    let mut g = GraphBuilder::default();
    g.run(
        RunSpec::new(
            label("", "slow"),
            "s",
            &["/bin/sh", "-c", "echo x > $1", "--", &o],
        )
        .output(&o),
    );
    exec.build(&g.graph, &wanted).unwrap();
    assert_eq!(read(&root, &o), "x\n");
}

/// Inputs that make up a whole directory are mounted as that directory (one mount, counted
/// in the kernel's `/proc/self/mountinfo`), and the action still sees exactly its inputs: a
/// directory of which one file is not declared keeps one mount per declared file and hides
/// the undeclared one; so does a directory holding the action's own output.
#[test]
fn inputs_covering_a_whole_directory_are_one_mount() {
    assert!(bwrap_available(), "{BWRAP_MISSING}");
    for mode in [SandboxMode::Bubblewrap, SandboxMode::BubblewrapPerAction] {
        let (_ws, root) = canonical_tempdir();
        for f in ["a", "b", "sub/c", "sub/d"] {
            write_file(&root, &format!("whole/{f}"), f);
        }
        for f in ["a", "b", "secret"] {
            write_file(&root, &format!("part/{f}"), f);
        }
        let o = out("", "m", "o.txt");
        let script = "{ find whole part | LC_ALL=C sort; \
                        grep -c \" $PWD/whole\" /proc/self/mountinfo; \
                        grep -c \" $PWD/part/\" /proc/self/mountinfo; } > $1";
        let mut spec = RunSpec::new(label("", "m"), "m", &["/bin/sh", "-c", script, "--", &o]);
        for f in ["a", "b", "sub/c", "sub/d"] {
            spec = spec.source(&format!("whole/{f}"));
        }
        spec = spec.source("part/a").source("part/b").output(&o);
        let mut g = GraphBuilder::default();
        g.run(spec);
        executor(&root, mode)
            .build(&g.graph, &[ArtifactRef::Build(o.clone())])
            .unwrap();
        assert_eq!(
            read(&root, &o),
            "part\npart/a\npart/b\nwhole\nwhole/a\nwhole/b\nwhole/sub\nwhole/sub/c\nwhole/sub/d\n1\n2\n",
            "{mode:?}"
        );
    }
}
