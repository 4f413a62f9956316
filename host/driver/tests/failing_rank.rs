//! One rank's failure ends the run: a rank that cannot go on (a corrupt xclbin, an xclbin
//! without the cables its peer expects) ends every rank within 2 s with its own message,
//! while the others wait in a collective or a link whose timeout is far longer.

use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::common::*;
use serde_json::json;

/// Longer than any bound the test asserts: the survivors must not end by their timeouts.
const LINK_TIMEOUT_S: &str = "30";

struct Ended {
    output: String,
    /// From the failing rank's error line reaching the launcher's stderr to the launcher's
    /// exit (after mpirun has reaped every rank).
    after_error: Duration,
}

fn run_to_the_end(xclbins: &[PathBuf], args: &[&str], cwd: &std::path::Path) -> Ended {
    let mut child = mpirun(xclbins, args, cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let out_thread = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    let err_thread = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let _ = tx.send((Instant::now(), line));
        }
    });
    let start = Instant::now();
    let exited = loop {
        if child.try_wait().unwrap().is_some() {
            break Instant::now();
        }
        if start.elapsed() > Duration::from_secs(90) {
            let _ = child.kill();
            panic!("the run hung: not ended 90 s after its start");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    err_thread.join().unwrap();
    let lines: Vec<(Instant, String)> = rx.try_iter().collect();
    let mut output = out_thread.join().unwrap();
    for (_, l) in &lines {
        output.push_str(l);
        output.push('\n');
    }
    let error_at = lines
        .iter()
        .find(|(_, l)| l.starts_with("aurora-host: rank ") && l.contains(": error: "))
        .map(|(t, _)| *t)
        .unwrap_or_else(|| panic!("no rank printed an error:\n{output}"));
    Ended {
        output,
        after_error: exited.saturating_duration_since(error_at),
    }
}

fn assert_all_ranks_gone(t: &str, cwd: &std::path::Path) {
    for r in 0..2 {
        assert!(
            rank_pids(r, cwd).is_empty(),
            "rank {r} still runs after the launcher ended:\n{t}"
        );
    }
}

#[test]
fn one_failing_rank_ends_every_rank_within_2_s_with_its_message() {
    let tmp = tempfile::tempdir().unwrap();

    // 1. Rank 1's xclbin is cut short: it fails loading while rank 0 waits in setup's
    //    all-gather (a collective without a timeout of its own).
    let xclbins = pair(tmp.path());
    let bytes = std::fs::read(&xclbins[1]).unwrap();
    std::fs::write(&xclbins[1], &bytes[..bytes.len() / 3]).unwrap();
    let e = run_to_the_end(
        &xclbins,
        &["--timeout-s", LINK_TIMEOUT_S, "status"],
        tmp.path(),
    );
    let t = &e.output;
    eprintln!("{t}ended {:?} after the error", e.after_error);
    assert!(
        t.contains(&format!(
            "aurora-host: rank 1: error: rank 1: loading {}",
            xclbins[1].display()
        )),
        "{t}"
    );
    assert!(t.contains("FAILED: 2 rank(s) did not finish: 0, 1"), "{t}");
    assert!(
        e.after_error < Duration::from_secs(2),
        "the run ended {:?} after rank 1's error:\n{t}",
        e.after_error
    );
    assert_all_ranks_gone(t, tmp.path());

    // 2. Rank 1's xclbin is fpga1 of the same deployment without its cables: setup passes,
    //    then `bench` fails on rank 1 while rank 0 waits for it at the first message size.
    let dir = tmp.path().join("uncabled");
    std::fs::create_dir_all(&dir).unwrap();
    let mut xclbins = pair(&dir);
    xclbins[1] = pack(
        &dir,
        "fpga1_uncabled",
        json!({
            "format": "auroraforge-sim-device/1", "deployment": "aurora_pair", "device": "fpga1",
            "node": 0, "card": 1, "platform": PLATFORM, "clock_mhz": 250,
            "kernels": [aurora(0, 65536), aurora(1, 65536)], "streams": [], "memory": [],
            "links": []
        }),
    );
    let e = run_to_the_end(
        &xclbins,
        &[
            "--timeout-s",
            LINK_TIMEOUT_S,
            "bench",
            "throughput",
            "--max-bytes",
            "4096",
            "--csv",
            "b.csv",
        ],
        &dir,
    );
    let t = &e.output;
    eprintln!("{t}ended {:?} after the error", e.after_error);
    assert!(
        t.contains("aurora-host: rank 1: error: device fpga1: no cabled AuroraFlow CU"),
        "{t}"
    );
    assert!(t.contains("FAILED: 2 rank(s) did not finish: 0, 1"), "{t}");
    assert!(
        e.after_error < Duration::from_secs(2),
        "the run ended {:?} after rank 1's error:\n{t}",
        e.after_error
    );
    assert!(!dir.join("b.csv").exists(), "no results from a failed run");
    assert_all_ranks_gone(t, &dir);
}
