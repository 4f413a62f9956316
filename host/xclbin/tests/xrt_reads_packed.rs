//! A packed sim xclbin read by XRT's own parser (libxrt_coreutil from libxrt-dev 2.13) and
//! by ours.

use std::ffi::{c_char, c_int, c_void, CString};
use std::path::{Path, PathBuf};
use std::process::Command;

#[link(name = "xrt_coreutil")]
extern "C" {
    fn xrtXclbinAllocFilename(filename: *const c_char) -> *mut c_void;
    fn xrtXclbinFreeHandle(handle: *mut c_void) -> c_int;
    fn xrtXclbinGetXSAName(
        handle: *mut c_void,
        name: *mut c_char,
        size: c_int,
        ret_size: *mut c_int,
    ) -> c_int;
    fn xrtXclbinGetNumKernels(handle: *mut c_void) -> usize;
    fn xrtXclbinGetNumKernelComputeUnits(handle: *mut c_void) -> usize;
    fn xrtXclbinGetUUID(handle: *mut c_void, uuid: *mut u8) -> c_int;
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

/// The U280's platform file (the board id, part and banks xclbin-pack writes).
fn u280_file() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../toolchains/fpga_platforms/xilinx_u280_gen3x16_xdma_1_202211_1.toml")
}

/// Runs the real `xclbin-pack` binary.
fn pack(dir: &Path, extra: &[&str]) -> std::process::Output {
    let out = dir.join("fpga0.xclbin");
    Command::new(env!("CARGO_BIN_EXE_xclbin-pack"))
        .arg("--description")
        .arg(data("fpga0.json"))
        .args(extra)
        .arg("--platform")
        .arg("xilinx_u280_gen3x16_xdma_1_202211_1")
        .arg("--platform-desc")
        .arg(u280_file())
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap()
}

fn payload_dir(dir: &Path) -> Vec<String> {
    let model = dir.join("model");
    std::fs::create_dir_all(model.join("sub")).unwrap();
    std::fs::write(model.join("Vaurora.so"), b"\x7fELF fake model").unwrap();
    std::fs::write(model.join("sub/params.json"), b"{\"a\":1}").unwrap();
    std::fs::write(dir.join("libdma_in.so"), vec![0xA5u8; 3000]).unwrap();
    std::fs::create_dir_all(dir.join("finn")).unwrap();
    std::fs::write(dir.join("finn/partition.onnx"), b"onnx bytes").unwrap();
    vec![
        "--payload".into(),
        format!("aurora_flow_1={}", model.display()),
        "--payload".into(),
        format!("dma_in={}", dir.join("libdma_in.so").display()),
        "--payload".into(),
        format!("finn_fpga0={}", dir.join("finn").display()),
    ]
}

#[test]
fn xrt_parser_lists_platform_kernels_and_cus() {
    let tmp = tempfile::tempdir().unwrap();
    let args = payload_dir(tmp.path());
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    let out = pack(tmp.path(), &args);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let path = CString::new(tmp.path().join("fpga0.xclbin").to_str().unwrap()).unwrap();
    unsafe {
        let h = xrtXclbinAllocFilename(path.as_ptr());
        assert!(!h.is_null(), "XRT could not open the packed xclbin");
        let mut name = [0 as c_char; 128];
        let mut len: c_int = 0;
        assert_eq!(xrtXclbinGetXSAName(h, name.as_mut_ptr(), 128, &mut len), 0);
        let name = std::ffi::CStr::from_ptr(name.as_ptr())
            .to_str()
            .unwrap()
            .to_string();
        assert_eq!(name, "xilinx_u280_gen3x16_xdma_1_202211_1");
        // 4 kernels (dma_in has two CUs), 5 CUs, as fpga0.json describes them.
        assert_eq!(xrtXclbinGetNumKernels(h), 4);
        assert_eq!(xrtXclbinGetNumKernelComputeUnits(h), 5);
        let mut uuid = [0u8; 16];
        assert_eq!(xrtXclbinGetUUID(h, uuid.as_mut_ptr()), 0);
        let ours = xclbin::read_xclbin(&tmp.path().join("fpga0.xclbin")).unwrap();
        assert_eq!(uuid, ours.xclbin.uuid);
        xrtXclbinFreeHandle(h);
    }
}

#[test]
fn read_back_gives_description_and_payloads() {
    let tmp = tempfile::tempdir().unwrap();
    let args = payload_dir(tmp.path());
    let args: Vec<&str> = args.iter().map(|s| s.as_str()).collect();
    assert!(pack(tmp.path(), &args).status.success());
    let sim = xclbin::read_xclbin(&tmp.path().join("fpga0.xclbin")).unwrap();
    // Same description as the input JSON (compared as JSON values: serde_json is the reference).
    let input: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(data("fpga0.json")).unwrap()).unwrap();
    assert_eq!(sim.description_json, input);
    assert_eq!(sim.description.kernels.len(), 5);
    assert_eq!(sim.description.links[0].peer_device, "fpga1");
    match sim.payload("dma_in").unwrap() {
        xclbin::read::Payload::File(bytes) => assert_eq!(bytes, vec![0xA5u8; 3000]),
        other => panic!("dma_in should be a file payload: {other:?}"),
    }
    let out = tmp.path().join("unpacked");
    xclbin::archive::unpack_to(&sim.payloads["aurora_flow_1"], &out).unwrap();
    assert_eq!(
        std::fs::read(out.join("Vaurora.so")).unwrap(),
        b"\x7fELF fake model"
    );
    assert_eq!(
        std::fs::read(out.join("sub/params.json")).unwrap(),
        b"{\"a\":1}"
    );
}

#[test]
fn bad_input_names_what_to_fix() {
    let tmp = tempfile::tempdir().unwrap();
    let out = pack(tmp.path(), &[]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("needs payload 'aurora_flow_1'"), "{err}");
    assert!(
        !tmp.path().join("fpga0.xclbin").exists(),
        "nothing half-written"
    );
    let bad = Command::new(env!("CARGO_BIN_EXE_xclbin-pack"))
        .arg("--description")
        .arg(data("fpga0.json"))
        .args([
            "--platform",
            "xilinx_u250_gen3x16_xdma_4_1_202210_1",
            "--platform-desc",
        ])
        .arg(u280_file())
        .arg("--out")
        .arg(tmp.path().join("x.xclbin"))
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&bad.stderr).contains("described for platform"));
}

#[test]
fn payloads_default_to_the_kernels_models() {
    // As the build graph runs it: no --payload, models are project-relative paths.
    let tmp = tempfile::tempdir().unwrap();
    payload_dir(tmp.path());
    std::fs::create_dir_all(tmp.path().join("hw/aurora_flow")).unwrap();
    std::fs::rename(
        tmp.path().join("model"),
        tmp.path().join("hw/aurora_flow/model"),
    )
    .unwrap();
    std::fs::create_dir_all(tmp.path().join("path")).unwrap();
    std::fs::rename(
        tmp.path().join("libdma_in.so"),
        tmp.path().join("path/libdma_in.so"),
    )
    .unwrap();
    std::fs::write(tmp.path().join("path/graph.json"), b"{}").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_xclbin-pack"))
        .current_dir(tmp.path())
        .arg("--description")
        .arg(data("fpga0.json"))
        .args([
            "--platform",
            "xilinx_u280_gen3x16_xdma_1_202211_1",
            "--platform-desc",
        ])
        .arg(u280_file())
        .args(["--out", "x.xclbin"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sim = xclbin::read_xclbin(&tmp.path().join("x.xclbin")).unwrap();
    assert_eq!(
        sim.payloads.keys().collect::<Vec<_>>(),
        ["aurora_flow_1", "dma_in", "finn_fpga0"]
    );
    match sim.payload("dma_in").unwrap() {
        xclbin::read::Payload::File(bytes) => assert_eq!(bytes, vec![0xA5u8; 3000]),
        other => panic!("{other:?}"),
    }
    match sim.payload("finn_fpga0").unwrap() {
        xclbin::read::Payload::Dir(files) => assert!(files.iter().any(|f| f.path == "graph.json")),
        other => panic!("{other:?}"),
    }
}

/// The board's facts come from its file: packed for the U55C (DS978: XCU55C, 16 GB HBM2 in
/// 32 pseudo-channels of 512 MB, no DDR), the container names its board and device, its HBM
/// banks are 512 MB, and a DDR bank is refused naming the board's memories.
#[test]
fn the_board_file_sets_board_device_and_banks() {
    let tmp = tempfile::tempdir().unwrap();
    let u55c = "xilinx_u55c_gen3x16_xdma_3_202210_1";
    let file = u280_file().with_file_name(format!("{u55c}.toml"));
    let text = std::fs::read_to_string(data("fpga0.json"))
        .unwrap()
        .replace("xilinx_u280_gen3x16_xdma_1_202211_1", u55c);
    let desc = tmp.path().join("fpga0.json");
    std::fs::write(&desc, &text).unwrap();
    let run = |desc: &Path| {
        Command::new(env!("CARGO_BIN_EXE_xclbin-pack"))
            .current_dir(tmp.path())
            .arg("--description")
            .arg(desc)
            .args(payload_dir(tmp.path()))
            .args(["--platform", u55c, "--platform-desc"])
            .arg(&file)
            .args(["--out", "x.xclbin"])
            .output()
            .unwrap()
    };
    let out = run(&desc);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(tmp.path().join("x.xclbin")).unwrap();
    let x = xclbin::axlf::Xclbin::from_bytes("x.xclbin", &bytes).unwrap();
    let xml = x
        .section(xclbin::axlf::SectionKind::EmbeddedMetadata)
        .map(|s| String::from_utf8_lossy(&s.data).to_string())
        .unwrap();
    assert!(xml.contains("boardid=\"u55c\""), "{xml}");
    assert!(xml.contains("fpgaDevice=\"xcu55c\""), "{xml}");
    let hbm3 =
        xclbin::sections::bank("HBM[3]", &fpga_platform::Platform::load(&file).unwrap()).unwrap();
    assert_eq!((hbm3.size_kb, hbm3.base), (512 * 1024, 3 * (512 << 20)));

    let ddr = tmp.path().join("ddr.json");
    std::fs::write(&ddr, text.replace("HBM[3]", "DDR[0]")).unwrap();
    let out = run(&ddr);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("has no DDR memory"),
        "{err}"
    );
}
