//! `deploy-tool plan-slice`: one device's share of the partition plan. The link step given the
//! slice makes the same v++ config and simulated device as given the whole plan, and a change
//! confined to the other device (its layers' folding and resources, its utilisation, the FPS
//! and bandwidth it sets) leaves the slice byte-identical, so that device's link is cached.

use crate::common;

use std::path::Path;

use deploy_tool::commands::{link_config_text, plan_slice, LinkConfigArgs};
use serde_json::{json, Value};

fn link(device: &str, plan: &Path) -> (String, Value) {
    let kernels = common::all_kernels();
    let (cfg, sim, _) = link_config_text(&LinkConfigArgs {
        deployment: &common::deployment("mobilenet_2fpga"),
        platform: &common::platform(),
        device,
        kernels: &kernels,
        plan: Some(plan),
        flow_control: Some(&common::kernel_toml()),
        finn_model: Some("buck-out/x/exec/fpga0"),
        cfg_out: Path::new("x.cfg"),
        sim_out: Path::new("x.json"),
    })
    .expect("links");
    (cfg, sim)
}

fn slice(dir: &Path, plan: &Path, device: &str, name: &str) -> std::path::PathBuf {
    let out = dir.join(name);
    plan_slice(plan, device, &out).expect("slices");
    out
}

#[test]
fn the_link_step_reads_the_same_from_the_slice_as_from_the_whole_plan() {
    let dir = tempfile::tempdir().unwrap();
    let whole = common::plan();
    for device in ["fpga0", "fpga1"] {
        let part = slice(dir.path(), &whole, device, &format!("{device}.json"));
        assert_eq!(
            link(device, &part),
            link(device, &whole),
            "{device}: the slice gives another link config"
        );
    }
}

/// The committed plan with everything that belongs to fpga1 alone changed.
fn changed_on_fpga1(plan: &Value) -> Value {
    let mut p = plan.clone();
    for l in p["layers"].as_array_mut().unwrap() {
        if l["device"] == "fpga1" {
            l["folding"] = json!({"PE": 1, "SIMD": 1});
            l["cycles"] = json!(123_456);
            l["res"]["LUT"] = json!(1.0);
        }
    }
    let d1 = p["devices"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|d| d["name"] == "fpga1")
        .unwrap();
    d1["utilization"]["LUT"] = json!(0.5);
    d1["fps"] = json!(100.0);
    d1["max_cycles"] = json!(2_500_000);
    p["fps"] = json!(100.0);
    p["finn_no_overlap_latency_ms"] = json!(99.0);
    p["bottleneck"] = json!("LabelSelect_hls_0");
    for c in p["cuts"].as_array_mut().unwrap() {
        c["gbps"] = json!(0.001);
    }
    p
}

#[test]
fn a_change_on_fpga1_leaves_the_slice_of_fpga0_byte_identical() {
    let dir = tempfile::tempdir().unwrap();
    let whole = common::plan();
    let plan: Value = serde_json::from_str(&std::fs::read_to_string(&whole).unwrap()).unwrap();
    let changed = common::write(
        dir.path(),
        "changed.json",
        &serde_json::to_string_pretty(&changed_on_fpga1(&plan)).unwrap(),
    );
    let read = |p: std::path::PathBuf| std::fs::read(p).unwrap();
    assert_eq!(
        read(slice(dir.path(), &whole, "fpga0", "a0.json")),
        read(slice(dir.path(), &changed, "fpga0", "b0.json")),
        "fpga0's slice depends on fpga1's layers"
    );
    assert_ne!(
        read(slice(dir.path(), &whole, "fpga1", "a1.json")),
        read(slice(dir.path(), &changed, "fpga1", "b1.json")),
        "fpga1's slice does not carry its own change"
    );
}

#[test]
fn a_device_the_plan_does_not_have_is_named_with_the_plan_s_devices() {
    let dir = tempfile::tempdir().unwrap();
    let err = plan_slice(&common::plan(), "fpga7", &dir.path().join("x.json"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("no device fpga7") && err.contains("fpga0, fpga1"),
        "{err}"
    );
    assert!(!dir.path().join("x.json").exists());
}
