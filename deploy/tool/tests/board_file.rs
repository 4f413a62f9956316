//! A board's facts come from its platform file only: the U55C's interface names and SLR reach
//! its link config, and one number changed in a scratch copy of the U280 file reaches every
//! consumer through the real tools' code: an SLR's DSPs the partitioner's devices, the
//! partition plan and the report; a GT quad the link config; a QSFP port's number the
//! packaged link kernel and the rules' Starlark module; a bank's base address the xclbin.

use crate::common;

use std::path::Path;

use deploy_tool::commands::{self, link_config_text, LinkConfigArgs};
use deploy_tool::partitioner;
use finn_partitioner::plan::Plan;

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

/// A scratch copy of the U280 file with `from` replaced by `to` once, at or after `after`.
fn scratch_u280(dir: &Path, after: &str, from: &str, to: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(platform_file(U280)).unwrap();
    let at = text.find(after).unwrap();
    let (head, tail) = text.split_at(at);
    assert!(tail.contains(from), "{from} after {after}");
    let scratch = dir.join("fpga_platforms");
    std::fs::create_dir_all(&scratch).unwrap();
    common::write(
        &scratch,
        &format!("{U280}.toml"),
        &format!("{head}{}", tail.replacen(from, to, 1)),
    )
}

/// mobilenet_2fpga partitioned for the board of `file`: the devices partitioner-inputs
/// writes, resolved by the partitioner, and its plan (throughput, as the deployment).
fn plan_on(dir: &Path, file: &Path) -> (Vec<f64>, Plan, std::path::PathBuf) {
    use finn_partitioner::{estimates, topology, Objective, Options};
    let (dep, plat) = commands::load(&common::deployment("mobilenet_2fpga"), file).unwrap();
    let json = common::write(
        dir,
        "devices.json",
        &partitioner::devices_json(&dep, &plat).to_string(),
    );
    let devs = finn_partitioner::devices::load(&json).unwrap();
    let topo: topology::Topology =
        serde_json::from_value(partitioner::topology_json(&dep)).unwrap();
    let est = estimates::Estimates::load(
        &common::root().join("finn/partitioner/tests/data/mobilenet_v1_estimates.json"),
    )
    .unwrap();
    let opts = Options {
        objective: Objective::Throughput,
        ..Options::default()
    };
    let plan = finn_partitioner::partition(&est, &devs, &topo, &opts).unwrap();
    let path = common::write(dir, "plan.json", &serde_json::to_string(&plan).unwrap());
    (devs.iter().map(|d| d.total.dsp).collect(), plan, path)
}

/// SLR0's DSP slices, 3,008 in DS963's thirds, set to 1,000 in a scratch copy: the devices
/// get 1,000 + 2 x 3,008 = 7,016, the plan's DSP utilisation is each card's DSPs over 7,016
/// (over 9,024 with the file as is), and the report prints those percentages.
#[test]
fn an_slrs_dsps_reach_the_plan_and_the_report() {
    let dir = tempfile::tempdir().unwrap();
    let file = scratch_u280(dir.path(), "[slr.SLR0]", "DSP = 3008", "DSP = 1000");
    for (platform, total) in [(platform_file(U280), 9024.0), (file, 7016.0)] {
        let (totals, plan, plan_path) = plan_on(dir.path(), &platform);
        assert_eq!(totals, [total, total], "{}", platform.display());
        let html = commands::report_text(
            &common::deployment("mobilenet_2fpga"),
            &platform,
            Some(&plan_path),
            &[],
        )
        .unwrap();
        for d in &plan.devices {
            let used = d.resources.dsp + d.reserved_link_kernels.dsp;
            let u = d.utilization["DSP"];
            assert!(
                (u - used / total).abs() < 1e-12,
                "{}: {u} of {total}",
                d.name
            );
            let row = format!("<td>{}</td><td>DSP</td><td>{:.1} %</td>", d.name, u * 100.0);
            assert!(html.contains(&row), "{row} missing in the report");
        }
    }
}

/// QSFP1's GT quad interface, `io_gt_qsfp1_00`, renamed `io_gt_qsfp1_01` in a scratch copy:
/// the link config connects aurora_flow_1's GT port there.
#[test]
fn a_gt_quad_reaches_the_link_config() {
    let dir = tempfile::tempdir().unwrap();
    let file = scratch_u280(
        dir.path(),
        "port = 1",
        "gt = \"io_gt_qsfp1_00\"",
        "gt = \"io_gt_qsfp1_01\"",
    );
    let before = loopback_cfg(dir.path(), U280, &platform_file(U280));
    let after = loopback_cfg(dir.path(), U280, &file);
    assert!(before.contains("connect=aurora_flow_1/gt_port:io_gt_qsfp1_00\n"));
    assert!(after.contains("connect=aurora_flow_1/gt_port:io_gt_qsfp1_01\n"));
    assert!(!after.contains("io_gt_qsfp1_00"), "{after}");
}

/// `aurora-flow-desc package` for `instance`, checked against the board of `file`.
fn package(dir: &Path, file: &Path, instance: u32) -> anyhow::Result<String> {
    let params = common::write(
        dir,
        &format!("params_{instance}.json"),
        &format!(
            r#"{{"kernel_name": "aurora_flow_{instance}", "instance": {instance},
 "use_framing": 0, "fifo_width": 64, "rx_fifo_size": 65536, "rx_fifo_prog_full": 512,
 "rx_fifo_prog_empty": 128, "tx_fifo_size": 8192, "ins_loss_nyq": 8, "rx_eq_mode": "LPM",
 "drain_axi_on_reset": 0, "part": "xcu280-fsvh2892-2L-e", "aurora_version": "12.0",
 "cable_m": 30, "xon_on_empty": 1, "stream_frame_words": 0, "sim_ip_reset_cycles": 300,
 "rtl_files": []}}"#
        ),
    );
    let desc = aurora_flow_desc::load(&common::kernel_toml()).unwrap();
    let board = fpga_platform::Platform::load(file).unwrap();
    let out = dir.join(format!("package_{instance}"));
    aurora_flow_desc::package::write_package(&desc, &params, Some(&board), &out, false)?;
    Ok(std::fs::read_to_string(out.join(format!("aurora_flow_{instance}.sv"))).unwrap())
}

/// QSFP port 1 numbered 3 in a scratch copy: the packager builds the link kernel for port 3
/// (its top takes gt_refclk_3) and refuses port 1 naming the file, the file as is the
/// reverse; the rules' Starlark module generated from the scratch files lists ports 0 and 3.
#[test]
fn a_qsfp_port_reaches_the_packaged_kernel_and_the_rules() {
    let dir = tempfile::tempdir().unwrap();
    let file = scratch_u280(dir.path(), "[[qsfp]]\nport = 1", "port = 1", "port = 3");
    let top = package(dir.path(), &file, 3).unwrap();
    assert!(top.contains("input  wire         gt_refclk_3_p,"), "{top}");
    let e = package(dir.path(), &file, 1).unwrap_err();
    let e = format!("{e:#}");
    assert!(
        e.contains("instance=1: the U280 has QSFP ports [0, 3]"),
        "{e}"
    );
    assert!(e.contains(&file.display().to_string()), "{e}");
    let e = format!(
        "{:#}",
        package(dir.path(), &platform_file(U280), 3).unwrap_err()
    );
    assert!(e.contains("has QSFP ports [0, 1]"), "{e}");
    assert!(package(dir.path(), &platform_file(U280), 1).is_ok());
    let all = fpga_platform::load_dir(file.parent().unwrap()).unwrap();
    assert!(fpga_platform::starlark_module(&all).contains("\"qsfp_ports\": [0, 3],"));
}

/// (tag, size in KiB, base address) of each bank of an xclbin's MEM_TOPOLOGY, read from XRT's
/// `struct mem_topology` layout (xclbin.h: an i32 count, 4 bytes padding, then 40-byte
/// `mem_data`: type, used, 6 bytes padding, size in KiB, base address, a 16-byte tag).
fn mem_topology(bytes: &[u8]) -> Vec<(String, u64, u64)> {
    let x = xclbin::axlf::Xclbin::from_bytes("x.xclbin", bytes).unwrap();
    let body = &x
        .section(xclbin::axlf::SectionKind::MemTopology)
        .unwrap()
        .data;
    let count = i32::from_le_bytes(body[0..4].try_into().unwrap()) as usize;
    (0..count)
        .map(|i| {
            let e = &body[8 + i * 40..8 + (i + 1) * 40];
            let word = |o: usize| u64::from_le_bytes(e[o..o + 8].try_into().unwrap());
            let tag = String::from_utf8_lossy(&e[24..40])
                .trim_end_matches('\0')
                .to_string();
            (tag, word(8), word(16))
        })
        .collect()
}

/// fpga0 of a description using `HBM[3]` and `DDR[1]`, packed by xclbin-pack's library for
/// the board of `file`.
fn pack_on(dir: &Path, file: &Path) -> Vec<(String, u64, u64)> {
    let desc = serde_json::json!({
        "format": "auroraforge-sim-device/1", "deployment": "t", "device": "fpga0",
        "platform": U280, "clock_mhz": 250,
        "kernels": [{"cu": "dma_in_0", "kernel": "dma_in", "kind": "finn",
            "control": "ap_ctrl_chain",
            "params": {"args": [
                {"index": 0, "kind": "memory", "name": "mem", "offset": 16, "port": "m_axi_gmem",
                 "size": 8, "width": 512}]},
            "ports": [{"name": "m_axi_gmem", "kind": "m_axi", "dir": "inout", "width": 512,
                       "bundle": "gmem"}],
            "model": null, "payload": null}],
        "streams": [],
        "memory": [{"cu": "dma_in_0", "port": "m_axi_gmem", "bank": "HBM[3]"},
                   {"cu": "dma_in_0", "port": "m_axi_gmem", "bank": "DDR[1]"}],
        "links": []
    });
    let path = common::write(dir, "fpga0.json", &desc.to_string());
    let x = xclbin::pack::build(&xclbin::pack::PackInput {
        description_path: path,
        payloads: vec![],
        platform: U280.into(),
        platform_desc: file.to_path_buf(),
    })
    .unwrap();
    mem_topology(&x.to_bytes().unwrap())
}

/// The banks' base addresses come from the file's `[bank_base]`: as is, HBM[3] lies where
/// PG276's 4H address map puts pseudo-channel 3 (AXI port bits 31:28: 3 << 28) and DDR[1] one
/// 16 GB DIMM (DS963) above DDR[0]; the DDR base changed in a scratch copy moves DDR[1] and
/// nothing else.
#[test]
fn a_banks_base_address_reaches_the_xclbin() {
    let dir = tempfile::tempdir().unwrap();
    let gib = 1u64 << 30;
    let before = pack_on(dir.path(), &platform_file(U280));
    assert_eq!(
        before,
        [
            ("HBM[3]".to_string(), 256 * 1024, 3 << 28),
            (
                "DDR[1]".to_string(),
                16 * 1024 * 1024,
                0x40_0000_0000 + 16 * gib
            ),
        ]
    );
    let file = scratch_u280(
        dir.path(),
        "[bank_base]",
        "DDR = 0x40_0000_0000",
        "DDR = 0x80_0000_0000",
    );
    let after = pack_on(dir.path(), &file);
    assert_eq!(after[0], before[0]);
    assert_eq!(
        after[1],
        (
            "DDR[1]".to_string(),
            16 * 1024 * 1024,
            0x80_0000_0000 + 16 * gib
        )
    );
}
