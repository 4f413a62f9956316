//! A rank killed mid-run: the run ends within seconds (mpirun notices the dead rank and
//! ends the others), with a message naming the rank and its node, long before the link
//! timeout of the survivors, and never a hang.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::*;

#[test]
fn killed_rank_ends_the_run_within_seconds_naming_rank_and_node() {
    let tmp = tempfile::tempdir().unwrap();
    let xclbins = pair(tmp.path());
    let mut child = mpirun(
        &xclbins,
        &[
            // far longer than the run may take to end: the survivors' link timeout is not
            // what ends it
            "--timeout-s",
            "60",
            "bench",
            "throughput",
            "--min-bytes",
            "1048576",
            "--max-bytes",
            "1048576",
            "--iterations",
            "1000",
            "--csv",
            "k.csv",
        ],
        tmp.path(),
    )
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .unwrap();
    let start = Instant::now();
    let victim = loop {
        if let Some(p) = rank_pids(1, tmp.path()).first() {
            break *p;
        }
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "rank 1 never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    std::thread::sleep(Duration::from_millis(1500)); // mid-run
    unsafe { libc_kill(victim, 9) };
    let killed = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if killed.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("the other rank hung after rank 1 was killed");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let o = child.wait_with_output().unwrap();
    let t = text(&o);
    eprintln!("{t}");
    assert!(!o.status.success(), "{t}");
    // The launcher names the dead rank, its node and how it ended, and fails the run.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let want = format!(
        "aurora-host: FAILED: rank 1 on node {} exited on signal 9 (Killed)",
        host.trim()
    );
    assert!(t.contains(&want), "no {want:?} in:\n{t}");
    assert!(t.contains("FAILED: 2 rank(s) did not finish: 0, 1"), "{t}");
    assert!(
        killed.elapsed() < Duration::from_secs(10),
        "ended {:?} after the kill; the link timeout is 60 s",
        killed.elapsed()
    );
    assert!(
        !tmp.path().join("k.csv").exists(),
        "no results from a broken run"
    );
}

extern "C" {
    #[link_name = "kill"]
    fn libc_kill(pid: i32, sig: i32) -> i32;
}
