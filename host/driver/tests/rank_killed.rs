//! A rank killed mid-run: the others stop within a timeout with an error naming the rank
//! and the link, never a hang.

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::*;

#[test]
fn killed_rank_stops_the_others_naming_rank_and_link() {
    let tmp = tempfile::tempdir().unwrap();
    let xclbins = pair(tmp.path());
    let mut child = mpirun(
        &xclbins,
        &[
            "--timeout-s",
            "3",
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
        if let Some(p) = rank_pids(1).first() {
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
    // The survivor names the dead rank and the link; the launcher fails the run.
    assert!(t.contains("aurora-host: rank 0: error: link fpga"), "{t}");
    assert!(t.contains("(rank 1)"), "{t}");
    assert!(t.contains("FAILED: 2 rank(s) did not finish: 0, 1"), "{t}");
    assert!(
        killed.elapsed() < Duration::from_secs(15),
        "stopped within the timeout"
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
