//! A board's facts come from its platform file only: the U55C's interface names and SLR reach
//! its link config, and one number changed in a scratch copy of the U280 file reaches the
//! partitioner's devices as the partitioner reads them.

mod common;

use std::path::Path;

use deploy_tool::commands::{self, link_config_text, LinkConfigArgs};
use deploy_tool::partitioner;

const U280: &str = "xilinx_u280_gen3x16_xdma_1_202211_1";
const U55C: &str = "xilinx_u55c_gen3x16_xdma_3_202210_1";

fn platform_file(name: &str) -> std::path::PathBuf {
    common::root().join(format!("toolchains/fpga_platforms/{name}.toml"))
}

/// The loopback description on `platform`, its fpga0 link config against `file`.
fn loopback_cfg(dir: &Path, platform: &str, file: &Path) -> String {
    let text = std::fs::read_to_string(common::deployment("aurora_loopback"))
        .unwrap()
        .replace(U280, platform);
    let dep = common::write(dir, "aurora_loopback.toml", &text);
    let kernels = common::all_kernels();
    let ktoml = common::kernel_toml();
    let args = LinkConfigArgs {
        deployment: &dep,
        platform: file,
        device: "fpga0",
        kernels: &kernels,
        plan: None,
        flow_control: Some(&ktoml),
        finn_model: None,
        cfg_out: Path::new("unused.cfg"),
        sim_out: Path::new("unused.json"),
    };
    link_config_text(&args).expect("loopback links").0
}

/// The U55C's QSFP interfaces as public v++ configurations for
/// xilinx_u55c_gen3x16_xdma_3_202210_1 connect them (refclka, where the U280's are refclkb).
#[test]
fn the_u55c_link_config_uses_its_port_names() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = loopback_cfg(dir.path(), U55C, &platform_file(U55C));
    for line in [
        "connect=io_clk_qsfp0_refclka_00:aurora_flow_0/gt_refclk_0",
        "connect=aurora_flow_0/gt_port:io_gt_qsfp0_00",
        "connect=io_clk_qsfp1_refclka_00:aurora_flow_1/gt_refclk_1",
        "connect=aurora_flow_1/gt_port:io_gt_qsfp1_00",
    ] {
        assert!(cfg.lines().any(|l| l == line), "{line} missing in:\n{cfg}");
    }
    assert!(!cfg.contains("refclkb"), "{cfg}");
    assert!(!cfg.contains("DDR["), "the U55C has no DDR:\n{cfg}");
}

/// One number changed in a scratch copy of the U280 file (SLR1's LUTs) reaches the devices
/// the partitioner reads; the unchanged file gives DS963's total.
#[test]
fn one_number_in_the_file_reaches_the_partitioner() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(platform_file(U280)).unwrap();
    let (head, tail) = text.split_at(text.find("[slr.SLR1]").unwrap());
    let changed = format!("{head}{}", tail.replacen("LUT = 434560", "LUT = 400000", 1));
    let scratch = dir.path().join("fpga_platforms");
    std::fs::create_dir_all(&scratch).unwrap();
    let file = common::write(&scratch, &format!("{U280}.toml"), &changed);
    let totals = |platform: &Path| {
        let (dep, plat) = commands::load(&common::deployment("mobilenet_2fpga"), platform).unwrap();
        let json = common::write(
            dir.path(),
            "devices.json",
            &partitioner::devices_json(&dep, &plat).to_string(),
        );
        let devs = finn_partitioner::devices::load(&json).unwrap();
        devs.iter().map(|d| d.total.lut).collect::<Vec<f64>>()
    };
    assert_eq!(totals(&platform_file(U280)), [1_303_680.0, 1_303_680.0]);
    assert_eq!(totals(&file), [1_269_120.0, 1_269_120.0]);
}
