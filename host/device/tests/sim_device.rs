//! A simulated device from a packed sim xclbin: an HLS kernel library (compiled here from C
//! against hw/hls/include/af_sim_abi.h) runs on its streams, and two AuroraFlow CUs cabled
//! in loopback come up and carry words, read through the `aurora` host API.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use aurora::AuroraFlow;
use fpga_device::sim::stream::Beat;
use fpga_device::sim::{SimDevice, SimOptions};
use fpga_device::{CuRegisters, Device, KernelArg};
use serde_json::json;

const PLATFORM: &str = "xilinx_u280_gen3x16_xdma_1_202211_1";

fn abi_include() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../hw/hls/include");
    assert!(
        dir.join("af_sim_abi.h").exists(),
        "hw/hls/include/af_sim_abi.h (//hw/hls:headers) missing"
    );
    dir
}

fn build_kernel(dir: &Path) -> PathBuf {
    let lib = dir.join("libadder.so");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let out = Command::new(&cc)
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(&lib)
        .arg("-I")
        .arg(abi_include())
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/adder_kernel.c"))
        .output()
        .unwrap_or_else(|e| panic!("{cc}: {e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    lib
}

fn pack(dir: &Path, description: serde_json::Value, payloads: Vec<(String, PathBuf)>) -> PathBuf {
    let desc = dir.join("device.json");
    std::fs::write(&desc, serde_json::to_string_pretty(&description).unwrap()).unwrap();
    let x = xclbin::pack::build(&xclbin::pack::PackInput {
        description_path: desc,
        payloads,
        platform: PLATFORM.into(),
        // the board's own file, as xclbin-pack in the rules is given it
        platform_desc: Path::new(env!("CARGO_MANIFEST_DIR"))
            .join(format!("../../toolchains/fpga_platforms/{PLATFORM}.toml")),
    })
    .unwrap();
    let out = dir.join("device.xclbin");
    xclbin::pack::write_atomic(&out, &x.to_bytes().unwrap()).unwrap();
    out
}

#[test]
fn hls_library_runs_on_its_streams() {
    let tmp = tempfile::tempdir().unwrap();
    let lib = build_kernel(tmp.path());
    let xclbin = pack(
        tmp.path(),
        json!({
            "format": "auroraforge-sim-device/1", "deployment": "t", "device": "fpga0",
            "platform": PLATFORM, "clock_mhz": 250,
            "kernels": [{"cu": "adder_0", "kernel": "adder", "kind": "hls", "model": "libadder.so",
                         "payload": "adder", "ports": []}],
            "streams": [{"from": "host.out", "to": "adder_0.in", "width": 64, "depth": 4},
                        {"from": "adder_0.out", "to": "host.in", "width": 64, "depth": 4}],
            "memory": [], "links": []
        }),
        vec![("adder".into(), lib)],
    );
    let mut dev = SimDevice::new("fpga0", SimOptions::default());
    dev.load_xclbin(&xclbin).unwrap();
    let cus = dev.compute_units().unwrap();
    assert_eq!(cus.len(), 1);
    assert_eq!(
        (cus[0].name.as_str(), cus[0].kind.as_str()),
        ("adder_0", "hls")
    );
    let run = dev
        .start_named("adder_0", &[("bias".into(), KernelArg::Scalar(3))])
        .unwrap();
    let input = dev.stream("adder_0.in").unwrap();
    let output = dev.stream("adder_0.out").unwrap();
    // 100 beats through depth-4 FIFOs: the kernel blocks on backpressure and resumes.
    let feeder = std::thread::spawn(move || {
        for i in 0..100u8 {
            let mut b = Beat::new(vec![i; 8]);
            b.last = i == 99;
            input.push(b, Duration::from_secs(5)).unwrap();
        }
    });
    let mut got = Vec::new();
    for _ in 0..100 {
        got.push(output.pop(Duration::from_secs(5)).unwrap().unwrap());
    }
    feeder.join().unwrap();
    dev.wait(run, Duration::from_secs(5)).unwrap();
    for (i, b) in got.iter().enumerate() {
        assert_eq!(b.data, vec![i as u8 + 3; 8]);
        assert_eq!(b.last, i == 99);
    }
    // A missing argument is the kernel's own error, surfaced with the CU name.
    let run = dev.start_named("adder_0", &[]).unwrap();
    let err = format!("{:#}", dev.wait(run, Duration::from_secs(5)).unwrap_err());
    assert!(
        err.contains("adder_0") && err.contains("argument 'bias' was not passed"),
        "{err}"
    );
}

#[test]
fn loopback_links_come_up_and_carry_words() {
    let tmp = tempfile::tempdir().unwrap();
    let port = |i: u32| {
        json!({"cu": format!("aurora_flow_{i}"), "kernel": format!("aurora_flow_{i}"), "kind": "rtl",
               "params": {"instance": i, "fifo_width": 64, "rx_fifo_size": 65536}, "ports": [],
               "model": null, "payload": null})
    };
    let xclbin = pack(
        tmp.path(),
        json!({
            "format": "auroraforge-sim-device/1", "deployment": "aurora_loopback", "device": "fpga0",
            "platform": PLATFORM, "clock_mhz": 250, "kernels": [port(0), port(1)],
            "streams": [], "memory": [],
            "links": [{"cu": "aurora_flow_0", "port": 0, "peer_device": "fpga0", "peer_port": 1, "cable_m": 1}]
        }),
        vec![],
    );
    let mut dev = SimDevice::new("fpga0", SimOptions::default());
    dev.load_xclbin(&xclbin).unwrap();
    for cu in ["aurora_flow_0", "aurora_flow_1"] {
        let af = AuroraFlow::new(
            cu,
            CuRegisters {
                device: &dev,
                cu: cu.into(),
            },
        );
        assert!(
            af.core_status_ok(Duration::from_millis(100)).unwrap(),
            "{cu} up"
        );
        assert_eq!(af.core_status().unwrap().raw, 0x11ff);
    }
    let a = dev.aurora("aurora_flow_0").unwrap();
    let b = dev.aurora("aurora_flow_1").unwrap();
    for i in 0..10u8 {
        a.transmit(Beat::new(vec![i; 64])).unwrap();
    }
    a.flush_tx().unwrap(); // end of message: the link may drain
    for i in 0..10u8 {
        assert_eq!(b.receive().unwrap().unwrap().data, vec![i; 64]);
    }
    let rx = AuroraFlow::new(
        "aurora_flow_1",
        CuRegisters {
            device: &dev,
            cu: "aurora_flow_1".into(),
        },
    );
    let tx = AuroraFlow::new(
        "aurora_flow_0",
        CuRegisters {
            device: &dev,
            cu: "aurora_flow_0".into(),
        },
    );
    assert_eq!(rx.counters().unwrap().rx_count, 10);
    assert_eq!(tx.counters().unwrap().tx_count, 10);
    assert!(
        dev.read_register("aurora_flow_0", 0x2000).is_err(),
        "outside the 4 KiB map"
    );
}

#[test]
fn hls_kernels_stream_through_a_loopback_link() {
    // host -> adder_0 -> aurora_flow_0.tx_axis ~~link~~ aurora_flow_1.rx_axis -> adder_1 -> host
    let tmp = tempfile::tempdir().unwrap();
    let lib = build_kernel(tmp.path());
    let adder = |cu: &str| json!({"cu": cu, "kernel": "adder", "kind": "hls", "model": "libadder.so", "payload": "adder", "ports": []});
    let port = |i: u32| {
        json!({"cu": format!("aurora_flow_{i}"), "kernel": format!("aurora_flow_{i}"), "kind": "rtl",
               "params": {"instance": i, "fifo_width": 64, "rx_fifo_size": 65536}, "ports": [],
               "model": null, "payload": null})
    };
    // The adder's 8 B beats ride 64 B link words here without a width converter: the host
    // side reads 8 B back (the ABI copies the port's width).
    let xclbin = pack(
        tmp.path(),
        json!({
            "format": "auroraforge-sim-device/1", "deployment": "t", "device": "fpga0",
            "platform": PLATFORM, "clock_mhz": 250,
            "kernels": [adder("adder_0"), adder("adder_1"), port(0), port(1)],
            "streams": [{"from": "host.out", "to": "adder_0.in", "width": 64, "depth": 4},
                        {"from": "adder_0.out", "to": "aurora_flow_0.tx_axis", "width": 64, "depth": 4},
                        {"from": "aurora_flow_1.rx_axis", "to": "adder_1.in", "width": 64, "depth": 4},
                        {"from": "adder_1.out", "to": "host.in", "width": 64, "depth": 4}],
            "memory": [],
            "links": [{"cu": "aurora_flow_0", "port": 0, "peer_device": "fpga0", "peer_port": 1, "cable_m": 5},
                      {"cu": "aurora_flow_1", "port": 1, "peer_device": "fpga0", "peer_port": 0, "cable_m": 5}]
        }),
        vec![("adder".into(), lib)],
    );
    let mut dev = SimDevice::new("fpga0", SimOptions::default());
    dev.load_xclbin(&xclbin).unwrap();
    let pumps = dev.start_link_pumps().unwrap();
    assert_eq!(pumps.len(), 2, "tx of aurora_flow_0, rx of aurora_flow_1");
    let r0 = dev
        .start_named("adder_0", &[("bias".into(), KernelArg::Scalar(1))])
        .unwrap();
    let r1 = dev
        .start_named("adder_1", &[("bias".into(), KernelArg::Scalar(10))])
        .unwrap();
    let input = dev.stream("adder_0.in").unwrap();
    let output = dev.stream("adder_1.out").unwrap();
    let feeder = std::thread::spawn(move || {
        for i in 0..50u8 {
            let mut b = Beat::new(vec![i; 8]);
            b.last = i == 49;
            input.push(b, Duration::from_secs(5)).unwrap();
        }
    });
    for i in 0..50u8 {
        let b = output.pop(Duration::from_secs(5)).unwrap().unwrap();
        assert_eq!(&b.data[..8], &[i + 11; 8]);
        assert_eq!(b.last, i == 49, "TLAST carried across the link");
    }
    feeder.join().unwrap();
    for r in [r0, r1].into_iter().chain(pumps) {
        dev.wait(r, Duration::from_secs(10)).unwrap();
    }
    let rx = AuroraFlow::new(
        "aurora_flow_1",
        CuRegisters {
            device: &dev,
            cu: "aurora_flow_1".into(),
        },
    );
    assert_eq!(rx.counters().unwrap().rx_count, 50);
}
