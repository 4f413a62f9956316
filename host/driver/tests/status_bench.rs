//! `aurora-host status` and `bench` under mpirun (Open MPI), one rank per simulated device.

use crate::common::*;

#[test]
fn status_shows_links_up_on_loopback_and_pair() {
    let tmp = tempfile::tempdir().unwrap();
    let (l, p) = (tmp.path().join("loopback"), tmp.path().join("pair"));
    std::fs::create_dir_all(&l).unwrap();
    std::fs::create_dir_all(&p).unwrap();
    for xclbins in [loopback(&l), pair(&p)] {
        let o = mpirun(&xclbins, &["status"], tmp.path()).output().unwrap();
        let t = text(&o);
        assert!(o.status.success(), "{t}");
        // 0x11ff = CORE_STATUS_OK of the public kernel: both CUs of every device up.
        assert_eq!(
            t.matches("CORE_STATUS     0x11ff").count(),
            2 * xclbins.len(),
            "{t}"
        );
        assert_eq!(t.matches(": UP").count(), 2 * xclbins.len(), "{t}");
        assert!(t.contains("prog_full 512 prog_empty 128"), "{t}");
    }
}

fn csv_rows(path: &std::path::Path) -> Vec<std::collections::BTreeMap<String, String>> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            header
                .iter()
                .map(|h| h.to_string())
                .zip(l.split(',').map(|v| v.to_string()))
                .collect()
        })
        .collect()
}

/// Runs `aurora-host ARGS --csv CSV` under mpirun in `dir`, fails with its output unless it
/// succeeds, and returns the rows of the CSV it wrote.
fn bench_csv(
    xclbins: &[std::path::PathBuf],
    args: &[&str],
    dir: &std::path::Path,
    csv: &str,
) -> Vec<std::collections::BTreeMap<String, String>> {
    let args: Vec<&str> = args.iter().copied().chain(["--csv", csv]).collect();
    let o = mpirun(xclbins, &args, dir).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    csv_rows(&dir.join(csv))
}

#[test]
fn bench_pair_writes_auroraflow_csv_with_intact_data() {
    let tmp = tempfile::tempdir().unwrap();
    let xclbins = pair(tmp.path());
    let rows = bench_csv(
        &xclbins,
        &["bench", "throughput", "--max-bytes", "65536"],
        tmp.path(),
        "out.csv",
    );
    // 2 ranks x 2 CUs x sizes 64 B .. 64 KiB (11 sizes).
    assert_eq!(rows.len(), 2 * 2 * 11);
    for r in &rows {
        assert_eq!(r["byte_errors"], "0");
        assert_eq!(r["fifo_rx_overflow_count"], "0");
        let words = r["message_size"].parse::<u64>().unwrap() / 64
            * r["iterations"].parse::<u64>().unwrap();
        assert_eq!(r["rx_count"].parse::<u64>().unwrap(), words);
        assert_eq!(r["tx_count"].parse::<u64>().unwrap(), words);
        assert_eq!(r["testmode"], "1");
    }
    // The link's payload limit: 32 B per 402.83 MHz cycle less 1 in 33 = 99.99 Gbit/s
    // (hw/aurora_flow/README.md); big messages approach it, none exceeds it.
    let big: Vec<f64> = rows
        .iter()
        .filter(|r| r["message_size"] == "65536")
        .map(|r| r["throughput_gbit_s"].parse().unwrap())
        .collect();
    assert!(big.iter().all(|g| *g > 90.0 && *g < 100.0), "{big:?}");
}

#[test]
fn throttled_receiver_rank_stalls_its_upstream_without_loss() {
    let tmp = tempfile::tempdir().unwrap();
    let xclbins = pair(tmp.path());
    for r in bench_csv(
        &xclbins,
        &[
            "bench",
            "throughput",
            "--min-bytes",
            "1048576",
            "--max-bytes",
            "1048576",
            "--iterations",
            "2",
            // the receiver at 8,192 words/s, well below the sender even on a busy machine
            "--throttle-us",
            "8000",
        ],
        tmp.path(),
        "nfc.csv",
    ) {
        assert_eq!(r["byte_errors"], "0");
        assert_eq!(r["fifo_rx_overflow_count"], "0");
        let on: u32 = r["nfc_on"].parse().unwrap();
        assert!(on > 0, "XOFF fired: {r:?}");
        assert_eq!(r["nfc_on"], r["nfc_off"]);
        assert_eq!(r["rx_count"], "32768");
    }
}

/// The RTL benchmark's streaming Gbit/s by message size in bytes, from its one copy: the table
/// of docs/benchmarks.md "AuroraFlow link kernel, RTL model" (`./forge run
/// //hw/aurora_flow:bench`: the RTL with its behavioural Aurora core, one message per size
/// over an idle looped-back link, receiver always ready, ap_clk 300 MHz, 64 B, channel 64
/// cycles).
fn rtl_benchmark_gbps() -> std::collections::BTreeMap<u64, f64> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/benchmarks.md");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (//:docs_benchmarks_md)", path.display()));
    let section = text
        .split("\n## ")
        .find(|s| s.starts_with("AuroraFlow link kernel, RTL model"))
        .unwrap_or_else(|| {
            panic!(
                "{}: no section \"AuroraFlow link kernel, RTL model\"",
                path.display()
            )
        });
    let mut gbps = std::collections::BTreeMap::new();
    for row in section.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = row.trim_matches('|').split('|').map(str::trim).collect();
        let bytes = match cells[0].split_once(' ') {
            Some((n, "B")) => n.parse::<u64>().ok(),
            Some((n, "KiB")) => n.parse::<u64>().ok().map(|n| n << 10),
            Some((n, "MiB")) => n.parse::<u64>().ok().map(|n| n << 20),
            _ => None,
        };
        if let (Some(bytes), Some(g)) = (bytes, cells.get(2).and_then(|c| c.parse().ok())) {
            gbps.insert(bytes, g);
        }
    }
    gbps
}

#[test]
fn loopback_latency_sweep_matches_the_rtl_benchmark() {
    let rtl = rtl_benchmark_gbps();
    let tmp = tempfile::tempdir().unwrap();
    let xclbins = loopback(tmp.path());
    let rows = bench_csv(
        &xclbins,
        &[
            "--channel-cycles",
            "64",
            "bench",
            "latency",
            "--min-bytes",
            "65536",
            "--max-bytes",
            "1048576",
            "--iterations",
            "3",
        ],
        tmp.path(),
        "lat.csv",
    );
    assert_eq!(rows.len(), 2 * 5, "2 CUs x 64 KiB .. 1 MiB");
    for size in [65536u64, 262144, 1048576] {
        let rtl = *rtl
            .get(&size)
            .unwrap_or_else(|| panic!("docs/benchmarks.md: no RTL figure for {size} B"));
        let size = size.to_string();
        for r in rows.iter().filter(|r| r["message_size"] == size) {
            let g: f64 = r["throughput_gbit_s"].parse().unwrap();
            assert!(
                (g - rtl).abs() / rtl < 0.01,
                "{size} B: {g} Gbit/s vs the RTL's {rtl}"
            );
            assert_eq!(r["testmode"], "0");
            assert_eq!(r["byte_errors"], "0");
        }
    }
}

#[test]
fn bench_on_a_ring_of_three() {
    let tmp = tempfile::tempdir().unwrap();
    let xclbins = ring(tmp.path(), 3);
    let rows = bench_csv(
        &xclbins,
        &["bench", "throughput", "--max-bytes", "4096"],
        tmp.path(),
        "ring.csv",
    );
    assert_eq!(rows.len(), 3 * 2 * 7, "3 ranks x 2 CUs x 64 B .. 4 KiB");
    for r in &rows {
        assert_eq!(r["byte_errors"], "0");
        assert_eq!(r["fifo_rx_overflow_count"], "0");
        assert_eq!(r["rx_count"], r["tx_count"]);
    }
}
