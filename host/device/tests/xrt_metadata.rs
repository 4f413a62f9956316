//! The XRT backend binds every kernel start by the xclbin's kernel metadata as XRT's own
//! parser (libxrt_coreutil 2.13, `xrt::xclbin`) reads it from a packed xclbin: the HLS
//! kernel's signature (dma_in(const ap_uint<512>* mem, hls::stream<..>& out,
//! uint64_t size), hw/hls/dma_in.cpp) with its indices and sizes, the memory its pointer
//! is connected to, the CUs' control protocols; calls that do not fit are refused.

use std::path::{Path, PathBuf};

use fpga_device::xrt::metadata::{ArgKind, Bound, Metadata};
use fpga_device::{BufferId, KernelArg};
use serde_json::json;

const PLATFORM: &str = "xilinx_u280_gen3x16_xdma_1_202211_1";

fn packed(dir: &Path) -> PathBuf {
    let d = json!({
        "format": "auroraforge-sim-device/1", "deployment": "tiny_2fpga", "device": "fpga0",
        "platform": PLATFORM, "clock_mhz": 250,
        "kernels": [
            {"cu": "aurora_flow_1", "kernel": "aurora_flow_1", "kind": "rtl", "control": "ap_ctrl_none",
             "params": {"fifo_width": 64},
             "ports": [{"name": "ap_clk", "kind": "clock", "dir": "in", "width": 1},
                       {"name": "tx_axis", "kind": "axis", "dir": "in", "width": 512},
                       {"name": "rx_axis", "kind": "axis", "dir": "out", "width": 512},
                       {"name": "s_axi_control", "kind": "axilite", "dir": "in", "width": 32}],
             "model": null, "payload": null},
            {"cu": "dma_in_0", "kernel": "dma_in", "kind": "hls", "control": "ap_ctrl_chain",
             "params": {"args": [
                 {"index": 0, "kind": "memory", "name": "mem", "offset": 16, "port": "m_axi_gmem", "size": 8, "width": 512},
                 {"index": 1, "kind": "stream", "name": "out", "port": "out", "width": 512},
                 {"index": 2, "kind": "scalar", "name": "size", "offset": 28, "port": "s_axi_control", "size": 8, "width": 64}]},
             "ports": [{"name": "ap_clk", "kind": "clock", "dir": "in", "width": 1},
                       {"name": "ap_rst_n", "kind": "reset", "dir": "in", "width": 1},
                       {"name": "m_axi_gmem", "kind": "m_axi", "dir": "inout", "width": 512, "bundle": "gmem"},
                       {"name": "s_axi_control", "kind": "axilite", "dir": "in", "width": 32},
                       {"name": "out", "kind": "axis", "dir": "out", "width": 512}],
             "model": null, "payload": null},
            {"cu": "dma_in_1", "kernel": "dma_in", "kind": "hls", "control": "ap_ctrl_chain",
             "params": {"args": [
                 {"index": 0, "kind": "memory", "name": "mem", "offset": 16, "port": "m_axi_gmem", "size": 8, "width": 512},
                 {"index": 1, "kind": "stream", "name": "out", "port": "out", "width": 512},
                 {"index": 2, "kind": "scalar", "name": "size", "offset": 28, "port": "s_axi_control", "size": 8, "width": 64}]},
             "ports": [{"name": "ap_clk", "kind": "clock", "dir": "in", "width": 1},
                       {"name": "m_axi_gmem", "kind": "m_axi", "dir": "inout", "width": 512, "bundle": "gmem"},
                       {"name": "out", "kind": "axis", "dir": "out", "width": 512}],
             "model": null, "payload": null}
        ],
        "streams": [{"from": "dma_in_0.out", "to": "aurora_flow_1.tx_axis", "width": 512, "depth": 32, "converter": null}],
        "memory": [{"cu": "dma_in_0", "port": "m_axi_gmem", "bank": "HBM[3]"},
                   {"cu": "dma_in_1", "port": "m_axi_gmem", "bank": "HBM[0]"}],
        "links": []
    });
    let desc = dir.join("fpga0.json");
    std::fs::write(&desc, d.to_string()).unwrap();
    let x = xclbin::pack::build(&xclbin::pack::PackInput {
        description_path: desc,
        payloads: vec![],
        platform: PLATFORM.into(),
        // the board's own file, as xclbin-pack in the rules is given it
        platform_desc: Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../../toolchains/fpga_platforms/{PLATFORM}.toml")),
    })
    .unwrap();
    let out = dir.join("fpga0.xclbin");
    xclbin::pack::write_atomic(&out, &x.to_bytes().unwrap()).unwrap();
    out
}

fn named(args: &[(&str, KernelArg)]) -> Vec<(String, KernelArg)> {
    args.iter().map(|(n, a)| (n.to_string(), *a)).collect()
}

#[test]
fn xrt_reads_the_signature_and_the_calls_are_bound_and_checked_by_it() {
    let tmp = tempfile::tempdir().unwrap();
    let m = Metadata::read(&packed(tmp.path())).unwrap();

    // What XRT's parser reads: the signature's order, kinds and sizes.
    let args = &m.args["dma_in"];
    let seen: Vec<(u32, &str, ArgKind, u32)> = args
        .iter()
        .map(|a| (a.index, a.name.as_str(), a.kind(), a.size))
        .collect();
    assert_eq!(
        seen,
        vec![
            (0, "mem", ArgKind::Global, 8),
            (1, "out", ArgKind::Stream, 4),
            (2, "size", ArgKind::Scalar, 8),
        ],
        "{args:?}"
    );
    let hbm3 = m.group_of("HBM[3]").expect("HBM[3] among XRT's memories");
    assert_eq!(
        m.cus["dma_in_0"].mems.get(&0),
        Some(&vec![hbm3]),
        "dma_in_0's mem is connected to HBM[3]: {:?}",
        m.cus
    );
    assert_eq!(m.cus["dma_in_0"].control, "chain");
    assert_eq!(m.cus["aurora_flow_1"].control, "none");

    // The host driver's call, bound by index, streams left to the link configuration.
    let buf = BufferId(7);
    let in_hbm3 = |b: BufferId| (b == buf).then_some(hbm3);
    let call = named(&[
        ("mem", KernelArg::Buffer(buf)),
        ("out", KernelArg::Stream),
        ("size", KernelArg::Scalar(1 << 33)),
    ]);
    assert_eq!(
        m.bind("dma_in_0", &call, in_hbm3).unwrap(),
        vec![
            (0, Bound::Buffer(buf)),
            (
                2,
                Bound::Scalar {
                    value: 1 << 33,
                    size: 8
                }
            )
        ]
    );

    // Calls that do not fit the metadata.
    let refused = |call: &[(&str, KernelArg)], bank: Option<u32>| {
        format!(
            "{:#}",
            m.bind("dma_in_0", &named(call), |_| bank).unwrap_err()
        )
    };
    let e = refused(
        &[
            ("size", KernelArg::Scalar(64)),
            ("mem", KernelArg::Buffer(buf)),
        ],
        Some(hbm3),
    );
    assert!(e.contains("out of the kernel's argument order"), "{e}");
    let e = refused(
        &[
            ("mem", KernelArg::Scalar(0)),
            ("size", KernelArg::Scalar(64)),
        ],
        Some(hbm3),
    );
    assert!(e.contains("argument 'mem' is Global (void*)"), "{e}");
    let e = refused(&[("mem", KernelArg::Buffer(buf))], Some(hbm3));
    assert!(
        e.contains("argument 'size' (unsigned long) is not given"),
        "{e}"
    );
    let e = refused(
        &[
            ("mem", KernelArg::Buffer(buf)),
            ("bytes", KernelArg::Scalar(64)),
        ],
        Some(hbm3),
    );
    assert!(e.contains("kernel dma_in has no argument 'bytes'"), "{e}");
    let other = m.group_of("HBM[0]").expect("HBM[0]");
    let e = refused(
        &[
            ("mem", KernelArg::Buffer(buf)),
            ("size", KernelArg::Scalar(64)),
        ],
        Some(other),
    );
    assert!(
        e.contains("the buffer for 'mem' is in HBM[0], but the xclbin connects 'mem' to HBM[3]"),
        "{e}"
    );
    let e = format!("{:#}", m.bind("aurora_flow_1", &[], |_| None).unwrap_err());
    assert!(e.contains("is free-running (ap_ctrl_none"), "{e}");
}

/// XRT's parser reads past the end of a truncated file; our reader refuses it first.
#[test]
fn a_truncated_xclbin_is_refused_by_name_before_xrts_parser_reads_it() {
    let tmp = tempfile::tempdir().unwrap();
    let path = packed(tmp.path());
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..200]).unwrap();
    let e = format!("{:#}", Metadata::read(&path).unwrap_err());
    assert!(
        e.starts_with(&format!("{}: truncated", path.display())) && e.contains("file has 200"),
        "{e}"
    );
}
