//! The host API on two simulated devices under mpirun, through the README's example program
//! (af-pingpong): rank 0 sends a message over the cable on QSFP port 0, rank 1 receives it.

mod fixtures;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;

/// AuroraFlow's user stream is 512 bits: its TX_COUNT / RX_COUNT count 64-byte words
/// (pc2/AuroraFlow README, "Monitoring").
const WORD_BYTES: usize = 64;

/// topology.json as the deploy tool writes it for a deployment of the user's kernels: the
/// devices by rank and, per CU, its scalar defaults. recv_1 has none on purpose.
fn topology(dir: &Path) -> PathBuf {
    let p = dir.join("topology.json");
    let t = json!({
        "format": "auroraforge-topology/1",
        "devices": [{"name": "fpga0", "rank": 0, "node": 0, "card": 0},
                    {"name": "fpga1", "rank": 1, "node": 0, "card": 1}],
        "cus": [
            {"device": "fpga0", "cu": "send_0", "kernel": "send",
             "scalars": {"frame_size": 0, "iterations": 1, "ack_mode": 2}},
            {"device": "fpga1", "cu": "recv_0", "kernel": "recv",
             "scalars": {"iterations": 1, "ack_mode": 2}, "memory": {}}
        ]
    });
    std::fs::write(&p, t.to_string()).unwrap();
    p
}

fn pingpong(xclbins: &[PathBuf], args: &[&str], cwd: &Path) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_af-pingpong"));
    for (i, x) in xclbins.iter().enumerate() {
        c.arg("--xclbin").arg(format!("fpga{i}={}", x.display()));
    }
    c.args(args).current_dir(cwd).output().unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The counters af-pingpong printed: (rank, port, when) -> (tx_count, rx_count).
fn counters(out: &str, rank: u32, port: u32, when: &str) -> (u64, u64) {
    let c = counter_line(out, rank, port, when);
    (c("tx_count"), c("rx_count"))
}

/// One counter line of af-pingpong's output, by counter name.
fn counter_line(out: &str, rank: u32, port: u32, when: &str) -> impl Fn(&str) -> u64 {
    let prefix = format!("rank {rank} (fpga{rank}): port {port} {when}: ");
    let line = out
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no line '{prefix}' in:\n{out}"));
    let w: Vec<String> = line.split_whitespace().map(str::to_string).collect();
    move |name: &str| -> u64 {
        let i = w.iter().position(|x| x == name).unwrap();
        w[i + 1].parse().unwrap()
    }
}

#[test]
fn a_message_crosses_the_cable_and_the_counters_see_it() {
    let tmp = tempfile::tempdir().unwrap();
    let xclbins = fixtures::pair(tmp.path());
    let t = topology(tmp.path());
    let bytes = 8192;
    let o = pingpong(
        &xclbins,
        &[
            "--topology",
            t.to_str().unwrap(),
            "--bytes",
            &bytes.to_string(),
            "--out",
            "received.bin",
            "--show-errors",
        ],
        tmp.path(),
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");

    // what arrived is the message, computed here independently of the program
    let want: Vec<u8> = (0..bytes).map(|i| (i % 251) as u8).collect();
    let got = std::fs::read(tmp.path().join("received.bin")).unwrap();
    assert!(
        got == want,
        "received bytes differ from the message:\n{out}"
    );
    // the buffers are in the banks of the link configuration (send_p: HBM[p], recv_p:
    // HBM[2 + p] in the fixture, as AuroraFlow's aurora_flow_test_hw.cfg)
    assert!(
        out.contains("rank 0 (fpga0): sent 8192 bytes from HBM[0]"),
        "{out}"
    );
    assert!(
        out.contains("rank 1 (fpga1): received 8192 bytes in HBM[2], as sent: true"),
        "{out}"
    );

    // every word of the message left port 0 of fpga0 and arrived on port 0 of fpga1
    let words = (bytes / WORD_BYTES) as u64;
    assert_eq!(counters(&out, 0, 0, "after the message").0, words, "{out}");
    assert_eq!(counters(&out, 1, 0, "after the message").1, words, "{out}");
    // port 1 carried nothing
    assert_eq!(counters(&out, 0, 1, "after the message"), (0, 0), "{out}");
    for rank in 0..2 {
        for port in 0..2 {
            assert_eq!(counters(&out, rank, port, "after reset"), (0, 0), "{out}");
        }
    }

    // errors name the CU and argument
    for rank in 0..2 {
        let me = format!("rank {rank} (fpga{rank}): error: ");
        assert!(
            out.contains(&format!("{me}no_such_cu: no such CU on device fpga{rank}")),
            "{out}"
        );
        assert!(
            out.contains(&format!(
                "{me}send_0.no_such_arg: CU send_0 (send) has no argument 'no_such_arg'"
            )),
            "{out}"
        );
        assert!(
            out.contains(&format!(
                "{me}recv_1.iterations: scalar argument not given and without a default"
            )),
            "{out}"
        );
    }
}

#[test]
fn a_throttled_receiver_makes_the_flow_control_fire_without_loss() {
    // 1024 words into an RX FIFO of 65536 B / 64 B = 1024 words, XOFF at half of it
    // (AuroraFlow's default rx_fifo_prog_full, kernel.toml), the receiver pausing 20 ms every
    // 64 words: the FIFO fills, XOFF fires and XON follows, no word is lost
    let tmp = tempfile::tempdir().unwrap();
    let xclbins = fixtures::pair(tmp.path());
    let t = topology(tmp.path());
    let bytes = 65536;
    let o = pingpong(
        &xclbins,
        &[
            "--topology",
            t.to_str().unwrap(),
            "--throttle-us",
            "20000",
            "--bytes",
            &bytes.to_string(),
        ],
        tmp.path(),
    );
    let out = text(&o);
    assert!(o.status.success(), "{out}");
    assert!(
        out.contains("received 65536 bytes in HBM[2], as sent: true"),
        "{out}"
    );
    let c = counter_line(&out, 1, 0, "after the message");
    assert_eq!(c("rx_count"), (bytes / WORD_BYTES) as u64, "{out}");
    assert!(c("nfc_full") > 0, "XOFF fired:\n{out}");
    assert_eq!(
        c("nfc_full"),
        c("nfc_empty"),
        "every XOFF has its XON:\n{out}"
    );
}

#[test]
fn a_scalar_without_a_default_ends_the_run_with_its_name() {
    // without topology.json the program passes no iterations: every rank fails at start
    let tmp = tempfile::tempdir().unwrap();
    let xclbins = fixtures::pair(tmp.path());
    let o = pingpong(&xclbins, &["--bytes", "64"], tmp.path());
    let out = text(&o);
    assert!(!o.status.success(), "{out}");
    assert!(
        out.contains("error: ") && out.contains(".iterations: scalar argument not given"),
        "{out}"
    );
}

#[test]
fn no_xclbin_is_refused_before_mpi() {
    let o = Command::new(env!("CARGO_BIN_EXE_af-pingpong"))
        .arg("--bytes")
        .arg("64")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("no --xclbin given"), "{}", text(&o));
}
