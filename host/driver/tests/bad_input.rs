//! xclbins that do not belong together are refused with the file, rank and what to check.

mod common;

use common::*;

#[test]
fn xclbins_of_different_deployments_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let pair_a = pair(&a);
    let lone = loopback(&b); // device fpga0 of aurora_loopback
    let o = mpirun(
        &[pair_a[0].clone(), lone[0].clone()],
        &["status"],
        tmp.path(),
    )
    .output()
    .unwrap();
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("every --xclbin must come from the same deployment build"),
        "{t}"
    );
    assert!(
        t.contains("aurora_loopback") && t.contains("aurora_pair"),
        "{t}"
    );
}

#[test]
fn wrong_number_of_xclbins_for_the_links() {
    let tmp = tempfile::tempdir().unwrap();
    let p = pair(tmp.path());
    // fpga0 alone: its links name fpga1, which no rank runs.
    let o = mpirun(&p[..1], &["status"], tmp.path()).output().unwrap();
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("link fpga0:0 -> fpga1:0: no rank runs device fpga1"),
        "{t}"
    );
}
