//! The `slr=` lines of the FINN deployments' link configs (U280 and U55C): every CU has one,
//! each AuroraFlow CU and tie-off on its QSFP's SLR as the platform file says (read here with
//! the toml crate, not through the deploy tool's reader), the FINN CU and the DMAs where the
//! partitioner's plan puts their layers.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use deploy_tool::commands::{link_config_text, LinkConfigArgs};

const BOARDS: [(&str, &str); 2] = [
    ("mobilenet_2fpga", "xilinx_u280_gen3x16_xdma_1_202211_1"),
    (
        "mobilenet_2fpga_u55c",
        "xilinx_u55c_gen3x16_xdma_3_202210_1",
    ),
];

fn platform(name: &str) -> PathBuf {
    common::root().join(format!("toolchains/fpga_platforms/{name}.toml"))
}

/// The MobileNet plan for this deployment and board, from partitioner-inputs as the build
/// makes it (throughput objective, the devices' SLRs).
fn plan(dir: &Path, dep: &str, board: &str) -> (PathBuf, serde_json::Value) {
    use finn_partitioner::{devices, estimates, slr, topology, Objective, Options};
    let (d, p) = deploy_tool::commands::load(&common::deployment(dep), &platform(board)).unwrap();
    let devices_json = deploy_tool::partitioner::devices_json(&d, &p);
    let specs: Vec<devices::DeviceSpec> =
        serde_json::from_value(devices_json["devices"].clone()).unwrap();
    let topo: topology::Topology =
        serde_json::from_value(deploy_tool::partitioner::topology_json(&d)).unwrap();
    let est = estimates::Estimates::load(
        &common::root().join("finn/partitioner/tests/data/mobilenet_v1_estimates.json"),
    )
    .unwrap();
    let opts = Options {
        objective: Objective::Throughput,
        slrs: slr::from_devices_json(&devices_json).unwrap(),
        ..Options::default()
    };
    let plan =
        finn_partitioner::partition(&est, &devices::resolve_all(&specs).unwrap(), &topo, &opts)
            .unwrap();
    let text = serde_json::to_string_pretty(&plan).unwrap();
    (
        common::write(dir, &format!("{dep}_plan.json"), &text),
        serde_json::from_str(&text).unwrap(),
    )
}

/// CU -> SLR of the config's `slr=` lines, and every CU its `nk=` lines name.
fn slr_lines(cfg: &str) -> (BTreeMap<String, String>, Vec<String>) {
    let conn = common::section(cfg, "connectivity");
    let slrs = conn
        .iter()
        .filter_map(|l| l.strip_prefix("slr="))
        .map(|l| {
            let (cu, slr) = l.split_once(':').unwrap();
            (cu.to_string(), slr.to_string())
        })
        .collect();
    let cus = conn
        .iter()
        .filter_map(|l| l.strip_prefix("nk="))
        .flat_map(|l| l.rsplit(':').next().unwrap().split(','))
        .map(str::to_string)
        .collect();
    (slrs, cus)
}

#[test]
fn every_cu_is_bound_to_the_slr_of_its_qsfp_or_of_its_layers() {
    for (dep, board) in BOARDS {
        let text = std::fs::read_to_string(platform(board)).unwrap();
        let file: toml::Value = toml::from_str(&text).unwrap();
        let qsfp_slr: BTreeMap<i64, String> = file["qsfp"]
            .as_array()
            .unwrap()
            .iter()
            .map(|q| {
                (
                    q["port"].as_integer().unwrap(),
                    q["slr"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        let (plan_path, plan) = plan(dir.path(), dep, board);
        let layers = plan["layers"].as_array().unwrap();
        let slr_of = |l: &serde_json::Value| l["slr"].as_str().unwrap().to_string();
        for device in ["fpga0", "fpga1"] {
            let (cfg, _, _) = link_config_text(&LinkConfigArgs {
                deployment: &common::deployment(dep),
                platform: &platform(board),
                device,
                kernels: &common::all_kernels(),
                plan: Some(&plan_path),
                flow_control: Some(&common::kernel_toml()),
                finn_model: Some("buck-out/x/partitions/fpga0"),
                cfg_out: Path::new("x.cfg"),
                sim_out: Path::new("x.json"),
            })
            .unwrap();
            let (slrs, cus) = slr_lines(&cfg);
            let mine: Vec<String> = layers
                .iter()
                .filter(|l| l["device"] == device)
                .map(slr_of)
                .collect();
            for cu in &cus {
                let got = slrs
                    .get(cu)
                    .unwrap_or_else(|| panic!("{dep} {device}: no slr= for {cu} in\n{cfg}"));
                let port = cu.rsplit('_').next().and_then(|p| p.parse::<i64>().ok());
                let want = match cu.as_str() {
                    c if c.starts_with("aurora_flow_") || c.starts_with("tie_off_") => {
                        qsfp_slr[&port.unwrap()].clone()
                    }
                    "dma_in_0" => slr_of(&layers[0]),
                    "dma_out_0" => slr_of(layers.last().unwrap()),
                    c if c == format!("finn_{device}") => {
                        assert!(mine.iter().all(|s| *s == mine[0]), "{mine:?}");
                        mine[0].clone()
                    }
                    c => panic!("{dep} {device}: unexpected CU {c}"),
                };
                assert_eq!(got, &want, "{dep} {device} {cu}:\n{cfg}");
            }
            // MobileNet's half fits one SLR, and the one beside the cable wins: no crossing
            assert_eq!(mine[0], qsfp_slr[&0], "{dep} {device}");
            let d = plan["devices"]
                .as_array()
                .unwrap()
                .iter()
                .find(|d| d["name"] == device)
                .unwrap();
            assert_eq!(d["slrs"]["crossings"], 0, "{dep} {device}");
        }
    }
}
