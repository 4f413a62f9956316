//! A FINN CU runs whatever `FinnPartition` is plugged in, frame by frame between its streams,
//! with its payload directory unpacked from the xclbin.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Result;
use fpga_device::sim::finn::{FinnFactory, FinnPartition};
use fpga_device::sim::stream::Beat;
use fpga_device::sim::{SimDevice, SimOptions};
use fpga_device::Device;
use serde_json::json;

/// Out byte i = in byte 2i + in byte 2i+1 (wrapping); checks it got its payload file.
struct PairSum;

impl FinnPartition for PairSum {
    fn input_frame_bytes(&self) -> usize {
        16
    }
    fn output_frame_bytes(&self) -> usize {
        8
    }
    fn run(&mut self, input: &[u8]) -> Result<Vec<u8>> {
        Ok(input.chunks(2).map(|p| p[0].wrapping_add(p[1])).collect())
    }
}

struct Factory;

impl FinnFactory for Factory {
    fn open(&self, kernel: &xclbin::KernelEntry, dir: &Path) -> Result<Box<dyn FinnPartition>> {
        assert_eq!(kernel.cu, "finn_0");
        assert_eq!(std::fs::read(dir.join("graph.json"))?, b"{}");
        Ok(Box::new(PairSum))
    }
}

#[test]
fn finn_cu_runs_the_plugged_in_partition() {
    let tmp = tempfile::tempdir().unwrap();
    let part = tmp.path().join("part");
    std::fs::create_dir_all(&part).unwrap();
    std::fs::write(part.join("graph.json"), b"{}").unwrap();
    let desc = tmp.path().join("d.json");
    std::fs::write(
        &desc,
        json!({
            "format": "auroraforge-sim-device/1", "deployment": "t", "device": "fpga0",
            "platform": "xilinx_u280_gen3x16_xdma_1_202211_1", "clock_mhz": 250,
            "kernels": [{"cu": "finn_0", "kernel": "finn_0", "kind": "finn", "model": "part", "payload": "finn_0",
                         "ports": [{"name": "in0", "kind": "axis", "dir": "in", "width": 64},
                                   {"name": "out0", "kind": "axis", "dir": "out", "width": 64}]}],
            "streams": [{"from": "host.out", "to": "finn_0.in0", "width": 64, "depth": 2},
                        {"from": "finn_0.out0", "to": "host.in", "width": 64, "depth": 2}],
            "memory": [], "links": []
        })
        .to_string(),
    )
    .unwrap();
    let x = xclbin::pack::build(&xclbin::pack::PackInput {
        description_path: desc,
        payloads: vec![("finn_0".into(), part)],
        platform: "xilinx_u280_gen3x16_xdma_1_202211_1".into(),
        // the board's own file, as xclbin-pack in the rules is given it
        platform_desc: Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../toolchains/fpga_platforms/xilinx_u280_gen3x16_xdma_1_202211_1.toml"),
    })
    .unwrap();
    let path = tmp.path().join("d.xclbin");
    xclbin::pack::write_atomic(&path, &x.to_bytes().unwrap()).unwrap();

    // Without an executor the CU refuses to start, naming what is missing.
    let mut bare = SimDevice::new("fpga0", SimOptions::default());
    bare.load_xclbin(&path).unwrap();
    let err = format!("{:#}", bare.start_named("finn_0", &[]).unwrap_err());
    assert!(err.contains("no FINN executor is plugged in"), "{err}");

    let mut dev = SimDevice::new(
        "fpga0",
        SimOptions {
            finn: Some(Arc::new(Factory)),
            ..SimOptions::default()
        },
    );
    dev.load_xclbin(&path).unwrap();
    let run = dev.start_named("finn_0", &[]).unwrap();
    let input = dev.stream("finn_0.in0").unwrap();
    let output = dev.stream("finn_0.out0").unwrap();
    let feeder = std::thread::spawn(move || {
        for i in 0..20u8 {
            input
                .push(Beat::new(vec![i; 8]), Duration::from_secs(5))
                .unwrap();
        }
        input.close().unwrap();
    });
    // 20 beats of 8 B = 10 frames of 16 B -> 10 output beats.
    for f in 0..10u8 {
        let b = output.pop(Duration::from_secs(5)).unwrap().unwrap();
        let (x, y) = (2 * f, 2 * f + 1);
        assert_eq!(
            b.data,
            vec![
                x.wrapping_add(x),
                x.wrapping_add(x),
                x.wrapping_add(x),
                x.wrapping_add(x),
                y.wrapping_add(y),
                y.wrapping_add(y),
                y.wrapping_add(y),
                y.wrapping_add(y)
            ]
        );
    }
    feeder.join().unwrap();
    assert!(
        output.pop(Duration::from_secs(5)).unwrap().is_none(),
        "closed after the last frame"
    );
    dev.wait(run, Duration::from_secs(5)).unwrap();
}
