//! A replica plan on deploy/mobilenet_2fpga.toml's two cards: copies 0 and 1 whole, one per
//! card, copy 2 cut across the cable (fpga0:1 -> fpga1:0) where today's single-copy plan cuts.
//! The plan is synthetic (the layers and the cut come from the solved single-copy plan, the
//! copies are written here), the expected link config lines follow from the plan format
//! (finn/README.md "Replicas") and UG1393's `nk=` / `stream_connect=` syntax.

use crate::common;

use std::path::Path;

use deploy_tool::commands::{link_config_text, LinkConfigArgs};

/// The single-copy plan plus `replicas`: (plan JSON, first layer, cut from, cut to, last).
fn replica_plan(cut_ports: (u32, u32)) -> (serde_json::Value, [String; 4]) {
    let mut plan = common::plan_json();
    let name = |v: &serde_json::Value| v.as_str().unwrap().to_string();
    let layers = plan["layers"].as_array().unwrap().clone();
    let first = name(&layers[0]["name"]);
    let last = name(&layers[layers.len() - 1]["name"]);
    let cut = plan["cuts"][0].clone();
    let (from, to) = (name(&cut["from_layer"]), name(&cut["to_layer"]));
    let whole = |i: usize, dev: &str| {
        serde_json::json!({"index": i, "fps": 1000.0, "cuts": [], "segments": [
            {"device": dev, "first_layer": first, "last_layer": last, "layers": []}]})
    };
    plan["replicas"] = serde_json::json!([
        whole(0, "fpga0"),
        whole(1, "fpga1"),
        {"index": 2, "fps": 1000.0, "segments": [
            {"device": "fpga0", "first_layer": first, "last_layer": from, "layers": []},
            {"device": "fpga1", "first_layer": to, "last_layer": last, "layers": []}],
         "cuts": [{"from_layer": from, "to_layer": to, "from_device": "fpga0",
                   "from_port": cut_ports.0, "to_device": "fpga1", "to_port": cut_ports.1,
                   "stream_bits": cut["stream_bits"], "gbps": 1.0}]},
    ]);
    plan["fps_total"] = serde_json::json!(3000.0);
    (plan, [first, from, to, last])
}

fn link(plan: &serde_json::Value, device: &str) -> anyhow::Result<String> {
    link_sim(plan, device, None).map(|(cfg, _)| cfg)
}

/// The link config and the simulated device, `finn_model` as vitis_link passes it.
fn link_sim(
    plan: &serde_json::Value,
    device: &str,
    finn_model: Option<&str>,
) -> anyhow::Result<(String, serde_json::Value)> {
    let dir = tempfile::tempdir().unwrap();
    let path = common::write(dir.path(), "plan.json", &plan.to_string());
    let kernels = common::all_kernels();
    let (cfg, sim, _) = link_config_text(&LinkConfigArgs {
        deployment: &common::deployment("mobilenet_2fpga"),
        platform: &common::platform(),
        device,
        kernels: &kernels,
        plan: Some(&path),
        flow_control: Some(&common::kernel_toml()),
        finn_model,
        cfg_out: Path::new("x.cfg"),
        sim_out: Path::new("x.json"),
    })?;
    Ok((cfg, sim))
}

/// vitis_link passes the executor export's root as the FINN model of a replica deployment:
/// a whole copy simulates `whole/`, a cut copy's segment the model exec.json lists for its
/// layers (finn/flow/export_exec.py writes the listing), and an export without that segment
/// is refused naming it.
#[test]
fn whole_copies_simulate_the_whole_model_and_a_segment_its_own() {
    let (plan, [first, from, ..]) = replica_plan((1, 0));
    let root = tempfile::tempdir().unwrap();
    let root_s = root.path().to_str().unwrap().to_string();
    let listing = |segments: serde_json::Value| {
        let exec = serde_json::json!({ "segments": segments });
        std::fs::write(root.path().join("exec.json"), exec.to_string()).unwrap();
    };
    listing(serde_json::json!([
        {"first_layer": first, "last_layer": from, "dir": "segments/head"},
    ]));
    let (_, sim) = link_sim(&plan, "fpga0", Some(&root_s)).unwrap();
    let model = |cu: &str| {
        sim["kernels"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["cu"] == cu)
            .unwrap_or_else(|| panic!("no CU {cu}"))["model"]
            .clone()
    };
    assert_eq!(model("finn_r0"), format!("{root_s}/whole").as_str());
    assert_eq!(model("finn_r2"), format!("{root_s}/segments/head").as_str());
    listing(serde_json::json!([]));
    let err = format!("{:#}", link_sim(&plan, "fpga0", Some(&root_s)).unwrap_err());
    assert!(
        err.contains("no executor model of the segment") && err.contains(&first),
        "{err}"
    );
}

fn assert_lines(cfg: &str, lines: &[String]) {
    let conn = common::section(cfg, "connectivity");
    for l in lines {
        assert!(conn.contains(l), "no {l} in\n{cfg}");
    }
}

#[test]
fn each_copy_gets_its_cus_dmas_and_the_cut_copy_its_cable() {
    let (plan, [first, from, to, last]) = replica_plan((1, 0));
    let head = format!("finn_{first}__{from}");
    let tail = format!("finn_{to}__{last}");
    let cfg0 = link(&plan, "fpga0").unwrap();
    assert_lines(
        &cfg0,
        &[
            "nk=finn_whole:1:finn_r0".into(),
            format!("nk={head}:1:finn_r2"),
            "nk=dma_in:2:dma_in_r0,dma_in_r2".into(),
            "nk=aurora_flow_1:1:aurora_flow_1".into(),
            "sp=dma_in_r0.m_axi_gmem:HBM[0]".into(),
            "stream_connect=dma_in_r0.out:finn_r0.s_axis_0".into(),
            "stream_connect=finn_r0.m_axis_0:dma_out_r0.in".into(),
            "stream_connect=dma_in_r2.out:finn_r2.s_axis_0".into(),
            "stream_connect=finn_r2.m_axis_0:aurora_flow_1.tx_axis".into(),
            "connect=aurora_flow_1/gt_port:io_gt_qsfp1_00".into(),
        ],
    );
    // copy 1 lives on the other card; copy 2's output DMA too
    assert!(
        !cfg0.contains("finn_r1") && !cfg0.contains("dma_out_r2"),
        "{cfg0}"
    );
    let cfg1 = link(&plan, "fpga1").unwrap();
    assert_lines(
        &cfg1,
        &[
            "nk=finn_whole:1:finn_r1".into(),
            format!("nk={tail}:1:finn_r2"),
            "stream_connect=dma_in_r1.out:finn_r1.s_axis_0".into(),
            "stream_connect=aurora_flow_0.rx_axis:finn_r2.s_axis_0".into(),
            "stream_connect=finn_r2.m_axis_0:dma_out_r2.in".into(),
            "connect=io_clk_qsfp0_refclkb_00:aurora_flow_0/gt_refclk_0".into(),
        ],
    );
    assert!(
        !cfg1.contains("dma_in_r2") && !cfg1.contains("finn_r0"),
        "{cfg1}"
    );
}

#[test]
fn whole_copies_only_need_no_cable() {
    let (mut plan, _) = replica_plan((1, 0));
    plan["replicas"].as_array_mut().unwrap().truncate(2);
    let cfg = link(&plan, "fpga0").unwrap();
    assert!(!cfg.contains("aurora_flow"), "{cfg}");
    assert_lines(&cfg, &["nk=finn_whole:1:finn_r0".into()]);
}

#[test]
fn a_cut_on_ports_no_cable_joins_is_refused_at_the_description() {
    // the chain cables fpga0:1 to fpga1:0; port 0 -> port 1 is not a cable
    let (plan, _) = replica_plan((0, 1));
    let e = format!("{:#}", link(&plan, "fpga0").unwrap_err());
    assert!(
        e.contains("mobilenet_2fpga.toml:") && e.contains("copy 2") && e.contains("fpga0:0"),
        "{e}"
    );
}

/// A file `./forge build //deploy:mobilenet_2fpga_replicas` built, when
/// //deploy/tool:mobilenet_2fpga_replicas_outputs runs these tests (MN_REPLICAS_* in the env,
/// project-relative); under `cargo test` the same checks run on what the library makes of the
/// partitioner's replica plan for the same description.
fn built(var: &str) -> Option<String> {
    std::env::var(var)
        .ok()
        .map(|p| std::fs::read_to_string(common::root().join(&p)).expect("built file"))
}

fn replica_plan_built() -> serde_json::Value {
    let text = built("MN_REPLICAS_PLAN").unwrap_or_else(|| common::replica_plan_text().into());
    serde_json::from_str(&text).unwrap()
}

fn replica_cfg(plan: &serde_json::Value, device: &str, var: &str) -> String {
    built(var).unwrap_or_else(|| {
        let dir = tempfile::tempdir().unwrap();
        let path = common::write(dir.path(), "plan.json", &plan.to_string());
        let kernels = common::all_kernels();
        link_config_text(&LinkConfigArgs {
            deployment: &common::deployment("mobilenet_2fpga_replicas"),
            platform: &common::platform(),
            device,
            kernels: &kernels,
            plan: Some(&path),
            flow_control: Some(&common::kernel_toml()),
            finn_model: None,
            cfg_out: Path::new("x.cfg"),
            sim_out: Path::new("x.json"),
        })
        .unwrap()
        .0
    })
}

/// The CUs an `nk=` line of `cfg` names for v++ kernel `kernel`.
fn nk(cfg: &str, kernel: &str) -> Vec<String> {
    let prefix = format!("nk={kernel}:");
    common::section(cfg, "connectivity")
        .iter()
        .filter_map(|l| l.strip_prefix(&prefix))
        .flat_map(|rest| rest.split_once(':').unwrap().1.split(','))
        .map(str::to_string)
        .collect()
}

/// MobileNet-V1 on two U280s: the plan's copies total at least 13,000 FPS, and the
/// link configs give every copy its FINN CU on each card its segments are on, its input DMA
/// where it starts and its output DMA where it ends, and nothing more.
#[test]
fn replicas_built_every_copy_has_its_cus_and_dmas() {
    let plan = replica_plan_built();
    let copies = plan["replicas"].as_array().expect("a replica plan");
    let total = plan["fps_total"].as_f64().unwrap();
    assert!(total >= 13_000.0, "modelled {total} FPS");
    let sum: f64 = copies.iter().map(|c| c["fps"].as_f64().unwrap()).sum();
    assert!((sum - total).abs() < 1e-6 * total, "{sum} vs {total}");
    let cfgs = [
        (
            "fpga0",
            replica_cfg(&plan, "fpga0", "MN_REPLICAS_FPGA0_CFG"),
        ),
        (
            "fpga1",
            replica_cfg(&plan, "fpga1", "MN_REPLICAS_FPGA1_CFG"),
        ),
    ];
    let mut seen = (0, 0, 0);
    for c in copies {
        let i = c["index"].as_u64().unwrap();
        let segs = c["segments"].as_array().unwrap();
        let on = |dev: &serde_json::Value| cfgs.iter().find(|(d, _)| dev == d).unwrap();
        let first = on(&segs[0]["device"]);
        let last = on(&segs[segs.len() - 1]["device"]);
        for (dev, cfg) in &cfgs {
            let here = segs.iter().any(|s| s["device"] == *dev);
            // the CUs of every FINN kernel (finn_whole, finn_<first>__<last>)
            let conn = common::section(cfg, "connectivity");
            let finn: Vec<&str> = conn
                .iter()
                .filter(|l| l.starts_with("nk=finn_"))
                .flat_map(|l| l.rsplit(':').next().unwrap().split(','))
                .collect();
            assert_eq!(
                finn.contains(&format!("finn_r{i}").as_str()),
                here,
                "copy {i} on {dev}"
            );
            let dma_in = nk(cfg, "dma_in").contains(&format!("dma_in_r{i}"));
            let dma_out = nk(cfg, "dma_out").contains(&format!("dma_out_r{i}"));
            assert_eq!(dma_in, first.0 == *dev, "copy {i}'s input DMA on {dev}");
            assert_eq!(dma_out, last.0 == *dev, "copy {i}'s output DMA on {dev}");
        }
        seen.0 += 1;
        seen.1 += usize::from(segs.len() == 1);
        seen.2 += usize::from(segs.len() > 1);
    }
    // every CU of a kernel is one copy's: no CU beyond the plan's copies
    let cus: usize = cfgs.iter().map(|(_, c)| nk(c, "dma_in").len()).sum();
    assert_eq!(cus, seen.0);
    assert!(seen.0 >= 2, "{seen:?}");
    if let Some(t) = built("MN_REPLICAS_TOPOLOGY") {
        let topo: serde_json::Value = serde_json::from_str(&t).unwrap();
        assert_eq!(
            topo["replicas"]["copies"].as_array().unwrap().len(),
            copies.len()
        );
        assert_eq!(topo["replicas"]["fps_total"], plan["fps_total"]);
    }
}
