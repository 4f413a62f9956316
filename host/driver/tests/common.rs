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

/// A built file forge names in the environment (`env_files` of //host/driver:tests).
fn built(var: &str) -> PathBuf {
    let v = std::env::var(var).unwrap_or_else(|_| {
        panic!("{var} is not set: run these tests with `./forge test //host/driver:tests`, which builds AuroraFlow's send/recv kernels (//hw/hls:send, :recv) and sets it")
    });
    let p = PathBuf::from(&v);
    if p.is_absolute() {
        return p;
    }
    // forge gives project-relative paths; the test runs in the crate directory
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(p)
}

/// CU `cu` of the benchmark kernel `kernel` ("send" or "recv"): its description as
/// hls_kernel wrote it, its C-simulation library as the payload.
fn bench_kernel(kernel: &str, cu: &str) -> serde_json::Value {
    let var = format!("AF_{}_KERNEL", kernel.to_uppercase());
    let mut k: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(built(&var)).unwrap()).unwrap();
    k["kernel"] = json!(kernel);
    k["cu"] = json!(cu);
    k["payload"] = json!(kernel);
    k
}

/// AuroraFlow's test application on `ports` (pc2/AuroraFlow test/cfg/aurora_flow_test_hw.cfg,
/// as the deploy tool writes it): a send and a recv CU per port on the AuroraFlow CU's
/// streams, acknowledges looped back per port and crossed between ports, send_p in HBM[p],
/// recv_p in HBM[n + p].
fn with_bench_kernels(mut d: serde_json::Value, ports: &[u32]) -> serde_json::Value {
    let n = ports.len();
    let (mut kernels, mut streams, mut memory) = (Vec::new(), Vec::new(), Vec::new());
    let s = |from: String, to: String, width: u32| json!({"from": from, "to": to, "width": width, "depth": 2});
    for (i, p) in ports.iter().enumerate() {
        let other = ports[(i + 1) % n];
        kernels.push(bench_kernel("send", &format!("send_{p}")));
        kernels.push(bench_kernel("recv", &format!("recv_{p}")));
        streams.push(s(
            format!("aurora_flow_{p}.rx_axis"),
            format!("recv_{p}.data_input"),
            512,
        ));
        streams.push(s(
            format!("send_{p}.data_output"),
            format!("aurora_flow_{p}.tx_axis"),
            512,
        ));
        streams.push(s(
            format!("recv_{p}.loopback_ack_stream"),
            format!("send_{p}.loopback_ack_stream"),
            8,
        ));
        streams.push(s(
            format!("recv_{p}.pair_ack_stream"),
            format!("send_{other}.pair_ack_stream"),
            8,
        ));
    }
    for (kind, first) in [("send", 0), ("recv", n)] {
        for (i, p) in ports.iter().enumerate() {
            memory.push(json!({"cu": format!("{kind}_{p}"), "port": "m_axi_gmem",
                               "bank": format!("HBM[{}]", first + i)}));
        }
    }
    d["kernels"].as_array_mut().unwrap().extend(kernels);
    d["streams"] = json!(streams);
    d["memory"] = json!(memory);
    d
}

#[allow(dead_code)] // not every test binary uses every fixture
pub fn pack(dir: &Path, name: &str, description: serde_json::Value) -> PathBuf {
    let bench = description["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .any(|k| k["kind"] == "hls");
    let desc = dir.join(format!("{name}.json"));
    std::fs::write(&desc, description.to_string()).unwrap();
    let payloads = if bench {
        ["send", "recv"]
            .iter()
            .map(|k| {
                (
                    k.to_string(),
                    built(&format!("AF_{}_LIB", k.to_uppercase())),
                )
            })
            .collect()
    } else {
        vec![]
    };
    let x = xclbin::pack::build(&xclbin::pack::PackInput {
        description_path: desc,
        payloads,
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
        with_bench_kernels(
            json!({
                "format": "auroraforge-sim-device/1", "deployment": "aurora_loopback", "device": "fpga0",
                "platform": PLATFORM, "clock_mhz": 250, "kernels": [aurora(0, 65536), aurora(1, 65536)],
                "streams": [], "memory": [],
                "links": [{"cu": "aurora_flow_0", "port": 0, "peer_device": "fpga0", "peer_port": 1, "cable_m": 5}]
            }),
            &[0, 1],
        ),
    )]
}

/// Two devices, fpga0:p <-> fpga1:p for p = 0, 1 (contract "pair").
#[allow(dead_code)] // not every test binary uses every fixture
pub fn pair(dir: &Path) -> Vec<PathBuf> {
    (0..2)
        .map(|i| {
            let me = format!("fpga{i}");
            let peer = format!("fpga{}", 1 - i);
            pack(dir, &me, with_bench_kernels(json!({
                "format": "auroraforge-sim-device/1", "deployment": "aurora_pair", "device": me,
                "node": 0, "card": i, "platform": PLATFORM, "clock_mhz": 250,
                "kernels": [aurora(0, 65536), aurora(1, 65536)], "streams": [], "memory": [],
                "links": [{"cu": "aurora_flow_0", "port": 0, "peer_device": peer, "peer_port": 0, "cable_m": 5},
                          {"cu": "aurora_flow_1", "port": 1, "peer_device": peer, "peer_port": 1, "cable_m": 5}]
            }), &[0, 1]))
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
            pack(dir, &me, with_bench_kernels(json!({
                "format": "auroraforge-sim-device/1", "deployment": "aurora_ring", "device": me,
                "node": i / 3, "card": i % 3, "platform": PLATFORM, "clock_mhz": 250,
                "kernels": [aurora(0, 65536), aurora(1, 65536)], "streams": [], "memory": [],
                "links": [{"cu": "aurora_flow_1", "port": 1, "peer_device": next, "peer_port": 0, "cable_m": 5},
                          {"cu": "aurora_flow_0", "port": 0, "peer_device": prev, "peer_port": 1, "cable_m": 5}]
            }), &[0, 1]))
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
