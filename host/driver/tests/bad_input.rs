//! xclbins that do not belong together are refused with the file, rank and what to check.

use crate::common::*;

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

/// The run script's form: `--xclbin DEVICE=PATH` and `--topology topology.json`.
#[test]
fn device_named_xclbins_and_topology_are_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let p = pair(tmp.path());
    let topology = tmp.path().join("topology.json");
    std::fs::write(
        &topology,
        r#"{"devices": [{"name": "fpga0", "rank": 0}, {"name": "fpga1", "rank": 1}]}"#,
    )
    .unwrap();
    let run = |a: &str, b: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_aurora-host"))
            .arg("--topology")
            .arg(&topology)
            .args(["--xclbin", a, "--xclbin", b, "status"])
            .current_dir(tmp.path())
            .output()
            .unwrap()
    };
    let (x0, x1) = (p[0].display().to_string(), p[1].display().to_string());
    let ok = run(&format!("fpga0={x0}"), &format!("fpga1={x1}"));
    assert!(ok.status.success(), "{}", text(&ok));
    let swapped = run(&format!("fpga0={x1}"), &format!("fpga1={x0}"));
    let t = text(&swapped);
    assert!(!swapped.status.success(), "{t}");
    // Each rank holds the other's xclbin; whichever says so first ends the job (MPI_Abort).
    assert!(
        t.contains("that xclbin is device fpga1's, not fpga0's")
            || t.contains("that xclbin is device fpga0's, not fpga1's"),
        "{t}"
    );
    let order = run(&x1, &x0);
    let t = text(&order);
    assert!(!order.status.success(), "{t}");
    // Both ranks load the other's xclbin; whichever says so first ends the job (MPI_Abort).
    assert!(
        t.contains("assigns device fpga0 to rank 0: pass the --xclbin in rank order")
            || t.contains("assigns device fpga1 to rank 1: pass the --xclbin in rank order"),
        "{t}"
    );
}
