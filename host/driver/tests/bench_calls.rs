//! `bench` on the aurora_pair deployment as the deploy tool builds it, its device calls
//! recorded (--record-calls) on the simulated devices and on the XRT backend over simulated
//! cards, checked against what AuroraFlow's own host program does (pc2/AuroraFlow
//! host/host_aurora_flow_test.cpp and host/Kernel.hpp at commit
//! 22f3ddfa5d10e50f2958ae3a0d9dac76eba00f93): each send and recv buffer is allocated in
//! the memory group of the kernel's memory argument, i.e. the bank its link configuration
//! (test/cfg/aurora_flow_test_hw.cfg) assigns; per transfer the pattern is written to the
//! send buffer, `recv.start()` comes before `send.start()`, both are waited for, then the
//! receive buffer is read back and compared.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::common::*;

/// The `sp=` lines of pc2/AuroraFlow test/cfg/aurora_flow_test_hw.cfg (commit
/// 957c8bb6df0bcb3686d4dbc0314e3703466699be): which HBM bank each CU's buffer lives in.
const PUBLISHED_BANKS: &[(&str, &str)] = &[
    ("send_0", "HBM[0]"),
    ("send_1", "HBM[1]"),
    ("recv_0", "HBM[2]"),
    ("recv_1", "HBM[3]"),
];

fn deployment_xclbin(var: &str) -> PathBuf {
    let v = std::env::var(var).unwrap_or_else(|_| {
        panic!("{var} is not set: run these tests with `./forge test //host/driver:tests`, which builds //deploy:aurora_pair and sets it")
    });
    let p = PathBuf::from(&v);
    if p.is_absolute() {
        p
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(p)
    }
}

/// `start run#N CU(a=1, b=buffer#2, ...)` as (CU, arguments by name).
fn parse_start(line: &str) -> Option<(String, BTreeMap<String, String>)> {
    let rest = line.strip_prefix("start run#")?;
    let (_, call) = rest.split_once(' ')?;
    let (cu, args) = call.split_once('(')?;
    let args = args
        .trim_end_matches(')')
        .split(", ")
        .filter_map(|a| a.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    Some((cu.to_string(), args))
}

/// Checks one rank's calls; returns how many transfers (recv + send runs, read back) it saw.
fn check_rank(calls: &str, who: &str) -> usize {
    let mut bank_of: BTreeMap<String, String> = BTreeMap::new();
    for l in calls.lines() {
        if let Some(rest) = l.strip_prefix("alloc ") {
            let (buf, rest) = rest.split_once(' ').unwrap();
            let bank = rest.rsplit(" in ").next().unwrap();
            bank_of.insert(buf.to_string(), bank.to_string());
        }
    }
    let published: BTreeMap<&str, &str> = PUBLISHED_BANKS.iter().copied().collect();
    let buf_arg = |cu: &str| {
        if cu.starts_with("send") {
            "data_input"
        } else {
            "data_output"
        }
    };
    // Transfers: the writes, starts and waits up to and including a run of read-backs.
    let mut segments: Vec<Vec<&str>> = vec![vec![]];
    let mut prev_read = false;
    for l in calls.lines().filter(|l| {
        ["write ", "start ", "wait ", "read "]
            .iter()
            .any(|p| l.starts_with(p))
    }) {
        let is_read = l.starts_with("read ");
        if prev_read && !is_read {
            segments.push(vec![]);
        }
        segments.last_mut().unwrap().push(l);
        prev_read = is_read;
    }
    let mut transfers = 0;
    for seg in segments
        .iter()
        .filter(|s| s.iter().any(|l| l.starts_with("start ")))
    {
        transfers += 1;
        let mut started: Vec<(String, BTreeMap<String, String>)> = Vec::new();
        let mut written: Vec<&str> = Vec::new();
        let (mut waits, mut reads) = (0, 0);
        for l in seg {
            if let Some(rest) = l.strip_prefix("write ") {
                written.push(rest.split(' ').next().unwrap());
            } else if let Some((cu, args)) = parse_start(l) {
                let buf = &args[buf_arg(&cu)];
                assert_eq!(
                    bank_of.get(buf).map(String::as_str),
                    published.get(cu.as_str()).copied(),
                    "{who}: {cu}'s buffer {buf} is not in the bank AuroraFlow's link config gives it: {l}"
                );
                if let Some(port) = cu.strip_prefix("send_") {
                    assert!(
                        written.contains(&buf.as_str()),
                        "{who}: {cu} started before its buffer {buf} was written: {l}"
                    );
                    let recv = started
                        .iter()
                        .find(|(c, _)| *c == format!("recv_{port}"))
                        .unwrap_or_else(|| panic!("{who}: {cu} started before recv_{port}: {l}"));
                    for k in ["byte_size", "iterations", "ack_mode"] {
                        assert_eq!(
                            recv.1[k], args[k],
                            "{who}: recv_{port} and {cu} differ in {k}"
                        );
                    }
                } else {
                    assert!(
                        !started.iter().any(|(c, _)| c.starts_with("send")),
                        "{who}: {cu} started after a sender of the same transfer: {l}"
                    );
                }
                started.push((cu, args));
            } else if l.starts_with("wait ") {
                waits += 1;
            } else if let Some(rest) = l.strip_prefix("read ") {
                reads += 1;
                let buf = rest.split(' ').next().unwrap();
                assert_eq!(
                    waits,
                    started.len(),
                    "{who}: {buf} read back before every run of the transfer was waited for"
                );
                assert!(
                    started
                        .iter()
                        .any(|(c, a)| c.starts_with("recv") && a["data_output"] == buf),
                    "{who}: read of {buf}, not a receive buffer of the transfer"
                );
            }
        }
        let recvs = started
            .iter()
            .filter(|(c, _)| c.starts_with("recv"))
            .count();
        assert_eq!(
            reads, recvs,
            "{who}: every receive buffer is read back once: {seg:#?}"
        );
        assert_eq!(
            recvs, 2,
            "{who}: both ports' recv run in every transfer: {seg:#?}"
        );
    }
    for (cu, _) in PUBLISHED_BANKS {
        assert!(
            calls.contains(&format!(" {cu}(")),
            "{who}: {cu} never started"
        );
    }
    transfers
}

#[test]
fn bench_calls_follow_auroraflows_host_on_both_backends() {
    let tmp = tempfile::tempdir().unwrap();
    let xclbins = vec![
        deployment_xclbin("BENCH_PAIR_FPGA0"),
        deployment_xclbin("BENCH_PAIR_FPGA1"),
    ];
    let mut recorded: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for backend in ["sim", "xrt-sim"] {
        for (mode, extra) in [
            ("latency", &["--max-bytes", "256", "--iterations", "3"][..]),
            ("throughput", &["--max-bytes", "1024"][..]),
        ] {
            let calls = tmp.path().join(format!("{backend}.{mode}"));
            let csv = format!("{backend}.{mode}.csv");
            let mut args = vec!["--backend", backend, "--record-calls"];
            let calls_s = calls.to_str().unwrap().to_string();
            args.push(&calls_s);
            args.extend(["bench", mode]);
            args.extend(extra);
            args.extend(["--csv", &csv]);
            let o = mpirun(&xclbins, &args, tmp.path()).output().unwrap();
            assert!(o.status.success(), "{backend} {mode}: {}", text(&o));
            let table = std::fs::read_to_string(tmp.path().join(&csv)).unwrap();
            let header: Vec<&str> = table.lines().next().unwrap().split(',').collect();
            let col = header.iter().position(|h| *h == "byte_errors").unwrap();
            for row in table.lines().skip(1) {
                assert_eq!(
                    row.split(',').nth(col),
                    Some("0"),
                    "{backend} {mode}: {row}"
                );
            }
            for r in 0..2 {
                let who = format!("{backend} {mode} rank {r}");
                let text = std::fs::read_to_string(calls.join(format!("rank{r}.calls"))).unwrap();
                let transfers = check_rank(&text, &who);
                // latency: 3 acknowledged messages per size (64, 128, 256 B); throughput:
                // one transfer per size (64 B .. 1 KiB)
                let want = if mode == "latency" { 3 * 3 } else { 5 };
                assert_eq!(transfers, want, "{who}: transfers\n{text}");
                recorded
                    .entry(format!("{mode} rank {r}"))
                    .or_default()
                    .push(text);
            }
        }
    }
    for (what, texts) in &recorded {
        assert_eq!(
            texts[0], texts[1],
            "{what}: sim and xrt-sim made different calls"
        );
    }
}

#[test]
fn bench_without_the_benchmark_kernels_names_the_stream_and_the_deployment_to_use() {
    // A pair of cards whose AuroraFlow CUs have nothing on their streams (no send/recv).
    let tmp = tempfile::tempdir().unwrap();
    let xclbins: Vec<PathBuf> = (0..2)
        .map(|i| {
            let (me, peer) = (format!("fpga{i}"), format!("fpga{}", 1 - i));
            pack(
                tmp.path(),
                &me,
                serde_json::json!({
                    "format": "auroraforge-sim-device/1", "deployment": "links_only", "device": me,
                    "platform": PLATFORM, "clock_mhz": 250,
                    "kernels": [aurora(0, 65536), aurora(1, 65536)], "streams": [], "memory": [],
                    "links": [{"cu": "aurora_flow_0", "port": 0, "peer_device": peer, "peer_port": 0, "cable_m": 5},
                              {"cu": "aurora_flow_1", "port": 1, "peer_device": peer, "peer_port": 1, "cable_m": 5}]
                }),
            )
        })
        .collect();
    for backend in ["sim", "xrt-sim"] {
        let o = mpirun(
            &xclbins,
            &[
                "--backend",
                backend,
                "--timeout-s",
                "5",
                "bench",
                "throughput",
            ],
            tmp.path(),
        )
        .output()
        .unwrap();
        let t = text(&o);
        assert!(!o.status.success(), "{backend}: {t}");
        // Both ranks lack the kernels; whichever says so first ends the job (MPI_Abort).
        assert!(
            ["fpga0", "fpga1"].iter().any(|d| t.contains(&format!(
                "device {d} (links_only): aurora_flow_0.tx_axis is not connected to a benchmark kernel"
            ))),
            "{backend}: {t}"
        );
        assert!(t.contains("app = \"aurora_bench\""), "{backend}: {t}");
        assert!(
            !tmp.path().join("results.csv").exists(),
            "{backend}: no CSV"
        );
    }
}
