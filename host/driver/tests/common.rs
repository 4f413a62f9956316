//! Sim xclbins of small deployments and a launcher of `mpirun` with one rank per device.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;

pub const PLATFORM: &str = "xilinx_u280_gen3x16_xdma_1_202211_1";

pub fn aurora(port: u32, rx_fifo_size: u32) -> serde_json::Value {
    json!({"cu": format!("aurora_flow_{port}"), "kernel": format!("aurora_flow_{port}"), "kind": "rtl",
           "params": {"instance": port, "fifo_width": 64, "rx_fifo_size": rx_fifo_size},
           "ports": [], "model": null, "payload": null})
}

#[allow(dead_code)] // not every test binary uses every fixture
pub fn pack(dir: &Path, name: &str, description: serde_json::Value) -> PathBuf {
    let desc = dir.join(format!("{name}.json"));
    std::fs::write(&desc, description.to_string()).unwrap();
    let x = xclbin::pack::build(&xclbin::pack::PackInput {
        description_path: desc,
        payloads: vec![],
        platform: PLATFORM.into(),
    })
    .unwrap();
    let out = dir.join(format!("{name}.xclbin"));
    xclbin::pack::write_atomic(&out, &x.to_bytes().unwrap()).unwrap();
    out
}

/// One device whose two ports are cabled to each other (ap_clk 300 MHz, as the RTL bench).
#[allow(dead_code)] // not every test binary uses every fixture
pub fn loopback(dir: &Path) -> Vec<PathBuf> {
    vec![pack(
        dir,
        "fpga0",
        json!({
            "format": "auroraforge-sim-device/1", "deployment": "aurora_loopback", "device": "fpga0",
            "platform": PLATFORM, "clock_mhz": 250, "kernels": [aurora(0, 65536), aurora(1, 65536)],
            "streams": [], "memory": [],
            "links": [{"cu": "aurora_flow_0", "port": 0, "peer_device": "fpga0", "peer_port": 1, "cable_m": 5}]
        }),
    )]
}

/// Two devices, fpga0:p <-> fpga1:p for p = 0, 1 (contract "pair").
pub fn pair(dir: &Path) -> Vec<PathBuf> {
    (0..2)
        .map(|i| {
            let me = format!("fpga{i}");
            let peer = format!("fpga{}", 1 - i);
            pack(dir, &me, json!({
                "format": "auroraforge-sim-device/1", "deployment": "aurora_pair", "device": me,
                "node": 0, "card": i, "platform": PLATFORM, "clock_mhz": 250,
                "kernels": [aurora(0, 65536), aurora(1, 65536)], "streams": [], "memory": [],
                "links": [{"cu": "aurora_flow_0", "port": 0, "peer_device": peer, "peer_port": 0, "cable_m": 5},
                          {"cu": "aurora_flow_1", "port": 1, "peer_device": peer, "peer_port": 1, "cable_m": 5}]
            }))
        })
        .collect()
}

/// `n` devices in a ring: port 1 of fpga<i> <-> port 0 of fpga<i+1 mod n> (contract "ring").
#[allow(dead_code)] // not every test binary uses every fixture
pub fn ring(dir: &Path, n: usize) -> Vec<PathBuf> {
    (0..n)
        .map(|i| {
            let me = format!("fpga{i}");
            let next = format!("fpga{}", (i + 1) % n);
            let prev = format!("fpga{}", (i + n - 1) % n);
            pack(dir, &me, json!({
                "format": "auroraforge-sim-device/1", "deployment": "aurora_ring", "device": me,
                "node": i / 3, "card": i % 3, "platform": PLATFORM, "clock_mhz": 250,
                "kernels": [aurora(0, 65536), aurora(1, 65536)], "streams": [], "memory": [],
                "links": [{"cu": "aurora_flow_1", "port": 1, "peer_device": next, "peer_port": 0, "cable_m": 5},
                          {"cu": "aurora_flow_0", "port": 0, "peer_device": prev, "peer_port": 1, "cable_m": 5}]
            }))
        })
        .collect()
}

/// `aurora-host` started outside MPI: it launches itself under mpirun, one rank per xclbin.
pub fn mpirun(xclbins: &[PathBuf], args: &[&str], cwd: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_aurora-host"));
    for x in xclbins {
        c.arg("--xclbin").arg(x);
    }
    c.args(args).current_dir(cwd);
    c
}

#[allow(dead_code)] // not every test binary uses every fixture
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// PIDs of `aurora-host` processes that are MPI rank `rank`.
#[allow(dead_code)] // not every test binary uses every fixture
pub fn rank_pids(rank: u32) -> Vec<i32> {
    let exe = env!("CARGO_BIN_EXE_aurora-host");
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let cmd = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        if !String::from_utf8_lossy(&cmd).starts_with(exe) {
            continue;
        }
        let env = std::fs::read(e.path().join("environ")).unwrap_or_default();
        if env
            .split(|b| *b == 0)
            .any(|v| v == format!("OMPI_COMM_WORLD_RANK={rank}").as_bytes())
        {
            out.push(pid);
        }
    }
    out
}
