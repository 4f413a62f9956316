//! Every copy of a kernel.toml fact is generated from it: the generated files and README tables
//! are byte for byte what the description gives now, and the RTL and testbenches state no
//! register offset or control-port signal of their own. Runs under `cargo test` (from the
//! crate directory) and as `//hw/aurora_flow:desc_check` (from hw/aurora_flow).

use aurora_flow_desc::{generated, load, KernelDesc};
use std::path::PathBuf;

/// hw/aurora_flow/desc, found from the directory the runner names (the crate's under cargo,
/// the BUCK package's, hw/aurora_flow, under the build graph).
fn crate_dir() -> PathBuf {
    let dir = PathBuf::from(
        std::env::var("CARGO_MANIFEST_DIR").expect("run by cargo or `action run-tests`"),
    );
    if dir.ends_with("hw/aurora_flow/desc") {
        dir
    } else {
        assert!(
            dir.ends_with("hw/aurora_flow"),
            "{}: not hw/aurora_flow[/desc]",
            dir.display()
        );
        dir.join("desc")
    }
}

fn root() -> PathBuf {
    crate_dir().join("../../..")
}

fn read(rel: &str) -> String {
    let path = root().join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn desc() -> KernelDesc {
    load(&root().join("hw/aurora_flow/kernel.toml")).expect("kernel.toml")
}

#[test]
fn generated_files_are_current() {
    let stale = generated::stale(&root(), &desc()).unwrap();
    assert!(
        stale.is_empty(),
        "stale: {stale:?}; regenerate: cargo run -p aurora_flow_desc -- regenerate \
         hw/aurora_flow/kernel.toml ."
    );
}

/// The register offsets as the RTL and testbench sources spell a 12-bit address.
fn offset_literals(d: &KernelDesc) -> Vec<String> {
    d.registers
        .iter()
        .flat_map(|r| {
            [
                format!("12'h{:03x}", r.offset),
                format!("12'h{:x}", r.offset),
            ]
        })
        .collect()
}

/// Hand-written HDL under hw/aurora_flow (not the generated package).
fn hand_written_hdl() -> Vec<PathBuf> {
    let base = root().join("hw/aurora_flow");
    let mut files = Vec::new();
    for dir in ["rtl", "sim/tb", "sim/tb/unit", "sim/model"] {
        for entry in std::fs::read_dir(base.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let hdl = matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("sv" | "svh")
            );
            if hdl && !path.ends_with("af_kernel_pkg.sv") {
                files.push(path);
            }
        }
    }
    files
}

/// The RTL and the testbenches take every register offset from af_kernel_pkg.
#[test]
fn no_register_offset_written_by_hand() {
    let literals = offset_literals(&desc());
    for path in hand_written_hdl() {
        let text = std::fs::read_to_string(&path).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap();
            if let Some(lit) = literals.iter().find(|l| code.contains(l.as_str())) {
                panic!(
                    "{}:{}: `{lit}` is a register offset; use af_kernel_pkg::REG_*",
                    path.display(),
                    n + 1
                );
            }
        }
    }
}

/// Every module that carries the control port declares and connects it through the generated
/// macros, never by a list of its own: the register slave, the kernel and the generated top.
#[test]
fn control_port_comes_from_the_header() {
    let d = desc();
    let first = format!(
        "{}_{}",
        d.kernel.axilite_port, d.kernel.axilite_signals[0].name
    );
    let top = rendered_top(&d);
    for (file, text, connects) in [
        (
            "rtl/af_axil_regs.sv",
            read("hw/aurora_flow/rtl/af_axil_regs.sv"),
            false,
        ),
        (
            "rtl/aurora_flow.sv",
            read("hw/aurora_flow/rtl/aurora_flow.sv"),
            true,
        ),
        ("the generated top", top, true),
    ] {
        assert!(
            text.contains("`include \"af_axil_ports.svh\"") && text.contains("`AF_AXIL_PORTS\n"),
            "{file}: must declare the control port with `AF_AXIL_PORTS from af_axil_ports.svh"
        );
        assert!(
            !connects || text.contains("`AF_AXIL_CONNECT\n"),
            "{file}: must connect the control port with `AF_AXIL_CONNECT"
        );
        let own_list = text.contains(&format!(".{first}("))
            || text
                .lines()
                .any(|l| l.contains(&first) && l.trim_start().starts_with("input"));
        assert!(
            !own_list,
            "{file}: declares or connects `{first}` itself; use the macros of af_axil_ports.svh"
        );
    }
}

/// Packages port 0 with the default parameters but `fifo_width` into a scratch directory:
/// the top's text, or the packaging's error.
fn package_port0(d: &KernelDesc, fifo_width: u32) -> (tempfile::TempDir, anyhow::Result<String>) {
    package_port0_rx(d, fifo_width, 65536, 512, 128, 30)
}

/// Packages port 0 with the default parameters but the width, the RX FIFO (size in bytes,
/// thresholds in words) and the cable.
fn package_port0_rx(
    d: &KernelDesc,
    fifo_width: u32,
    rx_fifo_size: u32,
    prog_full: u32,
    prog_empty: u32,
    cable_m: u32,
) -> (tempfile::TempDir, anyhow::Result<String>) {
    let dir = tempfile::tempdir().unwrap();
    let params = dir.path().join("params.json");
    let json = format!(
        r#"{{"kernel_name": "aurora_flow_0", "instance": 0, "use_framing": 0,
 "fifo_width": {fifo_width}, "rx_fifo_size": {rx_fifo_size}, "rx_fifo_prog_full": {prog_full},
 "rx_fifo_prog_empty": {prog_empty}, "tx_fifo_size": 8192, "ins_loss_nyq": 8, "rx_eq_mode": "LPM",
 "drain_axi_on_reset": 0, "part": "xcu280-fsvh2892-2L-e", "aurora_version": "12.0",
 "cable_m": {cable_m}, "xon_on_empty": 1, "stream_frame_words": 0, "sim_ip_reset_cycles": 300,
 "rtl_files": []}}"#
    );
    std::fs::write(&params, json).unwrap();
    let out = dir.path().join("out");
    let top = aurora_flow_desc::package::write_package(d, &params, None, &out, false)
        .map(|()| std::fs::read_to_string(out.join("aurora_flow_0.sv")).unwrap());
    (dir, top)
}

/// The top `aurora-flow-desc package` writes for port 0 with the default parameters.
fn rendered_top(d: &KernelDesc) -> String {
    package_port0(d, 64).1.unwrap()
}

/// The packaging refuses what the rule refuses: each parameter's own limits.
#[test]
fn package_refuses_a_parameter_outside_its_limits() {
    let (dir, top) = package_port0(&desc(), 48);
    let text = format!("{:#}", top.unwrap_err());
    assert!(
        text.contains("fifo_width: 48: must be one of 32, 64 (bytes)"),
        "{text}"
    );
    assert!(!dir.path().join("out").exists(), "nothing written");
}

/// The packaging (the Vivado path) refuses a lossy RX FIFO before any Vivado run: 8 KiB at
/// 64 B with the default thresholds holds 128 link beats above prog_full, the 30 m link needs
/// 128 + 4 x 30 = 248. The error names the parameter, both numbers and what to change, and
/// nothing is written.
#[test]
fn package_refuses_a_lossy_rx_fifo() {
    let d = desc();
    let (dir, top) = package_port0_rx(&d, 64, 8192, 64, 16, 30);
    let text = format!("{:#}", top.unwrap_err());
    assert!(
        text.contains(
            "rx_fifo_prog_full: headroom 64 words = 128 link beats (depth 128 - prog_full 64, \
             64 B words) is below the 248 beats in flight with cable_m = 30 (128 + 4 x 30 m)"
        ),
        "{text}"
    );
    assert!(
        text.contains("raise rx_fifo_size or lower rx_fifo_prog_full"),
        "{text}"
    );
    assert!(!dir.path().join("out").exists(), "nothing written");
    // one word of headroom short of the budget at 32 B (16 KiB, 30 m: 248 needed) is refused,
    // the limit itself packages
    let (_, short) = package_port0_rx(&d, 32, 16384, 265, 64, 30);
    let text = format!("{:#}", short.unwrap_err());
    assert!(
        text.contains("headroom 247 words = 247 link beats"),
        "{text}"
    );
    let (_, limit) = package_port0_rx(&d, 32, 16384, 264, 64, 30);
    limit.unwrap();
}
