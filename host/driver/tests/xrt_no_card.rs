//! `--backend xrt` on a machine without a card: every command (status, infer, bench, ...) opens
//! the card through XRT (libxrt_coreutil) and the run ends at once with XRT's own reason,
//! naming the call, rather than an abort or a hang.

use std::time::{Duration, Instant};

use crate::common::*;

#[test]
fn every_command_over_xrt_without_a_card_names_the_missing_device() {
    let tmp = tempfile::tempdir().unwrap();
    let xclbins = pair(tmp.path());
    for args in [
        &["--backend", "xrt", "status"][..],
        &["--backend", "xrt", "infer", "--images", "1"][..],
        &[
            "--backend",
            "xrt",
            "bench",
            "throughput",
            "--max-bytes",
            "4096",
        ][..],
        &["--backend", "xrt", "bench", "latency"][..],
        &[
            "--backend",
            "xrt",
            "--bdf",
            "0000:a1:00.1",
            "reset-counters",
        ][..],
    ] {
        let start = Instant::now();
        let o = mpirun(&xclbins, args, tmp.path()).output().unwrap();
        let t = text(&o);
        assert!(!o.status.success(), "{args:?}: {t}");
        assert!(
            t.contains(": error: no XRT device found (xrtDeviceOpen")
                || t.contains(": error: no XRT device found (xrtDeviceOpenByBDF(\"0000:a1:00.1\")"),
            "{args:?}: {t}"
        );
        assert!(t.contains("check `xbutil examine`"), "{args:?}: {t}");
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{args:?} took {:?}",
            start.elapsed()
        );
    }
}
