//! A simulated device allocates only in the banks of the loaded xclbin, each as large as its
//! board's platform file says (as XRT allocates in the xclbin's MEM_TOPOLOGY): the U55C's
//! 512 MB HBM pseudo-channel, read here from the board file itself.

use std::path::PathBuf;

use fpga_device::sim::{SimDevice, SimOptions};
use fpga_device::Device;
use serde_json::json;

const U55C: &str = "xilinx_u55c_gen3x16_xdma_3_202210_1";

fn board_file() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../toolchains/fpga_platforms")
        .join(format!("{U55C}.toml"))
}

/// `[bank_bytes] HBM` of the board file, read with a TOML parser of its own.
fn hbm_bank_bytes() -> usize {
    let text = std::fs::read_to_string(board_file()).unwrap();
    let doc: toml::Table = text.parse().unwrap();
    doc["bank_bytes"]["HBM"].as_integer().unwrap() as usize
}

fn device(dir: &std::path::Path) -> SimDevice {
    let d = json!({
        "format": "auroraforge-sim-device/1", "deployment": "t", "device": "fpga0",
        "platform": U55C, "clock_mhz": 250,
        "kernels": [
            {"cu": "dma_in_0", "kernel": "dma_in", "kind": "finn", "control": "ap_ctrl_chain",
             "params": {"args": [
                 {"index": 0, "kind": "memory", "name": "mem", "offset": 16, "port": "m_axi_gmem", "size": 8, "width": 512},
                 {"index": 1, "kind": "stream", "name": "out", "port": "out", "width": 512}]},
             "ports": [{"name": "ap_clk", "kind": "clock", "dir": "in", "width": 1},
                       {"name": "m_axi_gmem", "kind": "m_axi", "dir": "inout", "width": 512, "bundle": "gmem"},
                       {"name": "out", "kind": "axis", "dir": "out", "width": 512}],
             "model": null, "payload": null}],  // a FINN CU loads without a payload
        "streams": [],
        "memory": [{"cu": "dma_in_0", "port": "m_axi_gmem", "bank": "HBM[0]"}],
        "links": []
    });
    let desc = dir.join("fpga0.json");
    std::fs::write(&desc, d.to_string()).unwrap();
    let x = xclbin::pack::build(&xclbin::pack::PackInput {
        description_path: desc,
        payloads: vec![],
        platform: U55C.into(),
        platform_desc: board_file(),
    })
    .unwrap();
    let path = dir.join("fpga0.xclbin");
    xclbin::pack::write_atomic(&path, &x.to_bytes().unwrap()).unwrap();
    let mut dev = SimDevice::new("fpga0", SimOptions::default());
    dev.load_xclbin(&path).unwrap();
    dev
}

#[test]
fn a_bank_holds_what_the_board_file_says_and_only_the_xclbins_banks_exist() {
    let tmp = tempfile::tempdir().unwrap();
    let bank = hbm_bank_bytes();
    assert_eq!(bank, 512 << 20, "DS978: 16 GB over 32 pseudo-channels");
    let mut dev = device(tmp.path());
    dev.alloc("HBM[0]", 1 << 20).unwrap();
    let e = format!("{:#}", dev.alloc("HBM[0]", bank).unwrap_err());
    assert!(
        e.contains(&format!("HBM[0] has {} B free", bank - (1 << 20))),
        "{e}"
    );
    let e = format!("{:#}", dev.alloc("HBM[5]", 64).unwrap_err());
    assert!(
        e.contains("HBM[5] is not in the loaded xclbin (its banks: HBM[0])"),
        "{e}"
    );
}

#[test]
fn nothing_is_allocated_before_an_xclbin_is_loaded() {
    let mut dev = SimDevice::new("fpga0", SimOptions::default());
    let e = format!("{:#}", dev.alloc("HBM[0]", 64).unwrap_err());
    assert!(e.contains("no xclbin loaded"), "{e}");
}
