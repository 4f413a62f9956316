//! `infer` refuses what it cannot run, naming it, and every rank ends (no hang).

use crate::common::*;

#[test]
fn infer_on_a_link_deployment_names_it_and_points_to_bench() {
    let tmp = tempfile::tempdir().unwrap();
    let xclbins = pair(tmp.path());
    let o = mpirun(
        &xclbins,
        &["--timeout-s", "5", "infer", "--images", "2"],
        tmp.path(),
    )
    .output()
    .unwrap();
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("infer: deployment aurora_pair has no FINN partition on any device"),
        "{t}"
    );
    assert!(
        t.contains("use `bench latency` or `bench throughput`"),
        "{t}"
    );
    // rank 1 ended on its own (it printed its done line, so the launcher lists only rank 0)
    assert!(t.contains("1 rank(s) did not finish: 0"), "{t}");
}
