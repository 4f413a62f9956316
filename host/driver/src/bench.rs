//! `bench latency|throughput`: AuroraFlow's link benchmark (test/host of pc2/AuroraFlow) on
//! the emulated links: every cabled CU sends messages of 64 B .. 1 MiB while receiving its
//! peer's, the data is checked, and one CSV row per receiving CU and size is written with
//! AuroraFlow's columns. Times are modelled link time (cycles of the Aurora user clock).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use aurora::AuroraFlow;
use fpga_device::sim::aurora_cu::AuroraCu;
use fpga_device::sim::link::LINK_CLOCK_MHZ;
use fpga_device::sim::stream::Beat;
use mpi::collective::CommunicatorCollectives;
use mpi::topology::SimpleCommunicator;
use xclbin::DeviceDescription;

use crate::setup::Rank;

/// AuroraFlow's CSV columns (eval/eval.jl of pc2/Aurora-HLS), then ours.
pub const CSV_COLUMNS: &[&str] = &[
    "hostname",
    "job_id",
    "commit_id",
    "xrt_version",
    "bdf",
    "rank",
    "config",
    "repetition",
    "testmode",
    "frame_size",
    "message_size",
    "iterations",
    "test_nfc",
    "transmission_time",
    "rx_count",
    "tx_count",
    "failed_transmissions",
    "fifo_rx_overflow_count",
    "fifo_tx_overflow_count",
    "nfc_on",
    "nfc_off",
    "nfc_latency",
    "byte_errors",
    "gt_not_ready_0",
    "gt_not_ready_1",
    "gt_not_ready_2",
    "gt_not_ready_3",
    "line_down_0",
    "line_down_1",
    "line_down_2",
    "line_down_3",
    "pll_not_locked",
    "mmcm_not_locked",
    "hard_err",
    "soft_err",
    "channel_down",
    "frames_received",
    "frames_with_errors",
    // added: modelled per-message latency, modelled throughput, host wall time
    "latency_s",
    "throughput_gbit_s",
    "wall_time_s",
];

#[derive(Clone, Copy, PartialEq, Eq, Debug, clap::ValueEnum)]
pub enum Mode {
    Latency,
    Throughput,
}

pub struct BenchArgs {
    pub mode: Mode,
    pub min_bytes: u64,
    pub max_bytes: u64,
    pub iterations: Option<u64>,
    pub repetitions: u32,
    pub throttle_us: u64,
}

/// Who sends into `cu`: its link's other end.
pub fn peer_of(d: &DeviceDescription, cu: &AuroraCu) -> Option<(String, u32)> {
    if let Some(l) = d.links.iter().find(|l| l.cu == cu.name) {
        return Some((l.peer_device.clone(), l.peer_port));
    }
    d.links
        .iter()
        .find(|l| l.peer_device == d.device && l.peer_port == cu.port)
        .map(|l| (d.device.clone(), l.port))
}

fn seed(device: &str, port: u32) -> u32 {
    device.bytes().fold(2166136261u32 ^ port, |h, b| {
        (h ^ b as u32).wrapping_mul(16777619)
    })
}

fn pattern(seed: u32, message: u64, index: usize) -> u8 {
    ((index as u32).wrapping_mul(2654435761) ^ seed ^ (message as u32).wrapping_mul(40503)) as u8
}

struct Result_ {
    byte_errors: u64,
    failed: u64,
    cycles: u64,
    latency_cycles: u64,
}

fn sizes(args: &BenchArgs) -> Vec<u64> {
    let mut s = Vec::new();
    let mut n = args.min_bytes.next_power_of_two();
    while n <= args.max_bytes {
        s.push(n);
        n *= 2;
    }
    s
}

pub fn run(world: &SimpleCommunicator, rank: &Rank, args: &BenchArgs) -> Result<Vec<String>> {
    let d = rank.device.description()?.clone();
    let cus: Vec<Arc<AuroraCu>> = rank
        .aurora
        .values()
        .filter(|c| c.rx_link().is_some() && c.tx_sender().is_some())
        .cloned()
        .collect();
    if cus.is_empty() {
        bail!(
            "device {}: no cabled AuroraFlow CU (check the deployment's topology)",
            d.device
        );
    }
    // Without --throttle-us the receiving kernel is AuroraFlow's recv, always ready at one
    // word per ap_clk cycle; with it, the host thread is the (slow) receiving kernel.
    let rate = if args.throttle_us > 0 {
        None
    } else {
        Some(d.clock_mhz / LINK_CLOCK_MHZ)
    };
    for c in &cus {
        c.rx_link().unwrap().set_consumer_rate(rate);
    }
    let sizes = sizes(args);
    let bar = if rank.rank == 0 {
        let b = indicatif::ProgressBar::new(sizes.len() as u64 * args.repetitions as u64);
        b.set_style(indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").unwrap());
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap_or_default()
        .trim()
        .to_string();
    let job = std::env::var("SLURM_JOB_ID").unwrap_or_default();
    let commit = std::env::var("AURORAFORGE_COMMIT").unwrap_or_default();
    let testmode = if d.links.iter().all(|l| l.peer_device == d.device) {
        0
    } else {
        1
    };
    let mut rows = Vec::new();
    for &size in &sizes {
        for rep in 0..args.repetitions {
            bar.set_message(format!("{size} B"));
            let width = cus[0].params.fifo_width as u64;
            if size % width != 0 {
                bail!("message size {size} B is not a multiple of the {width} B stream width");
            }
            let words = (size / width) as usize;
            let iterations = args.iterations.unwrap_or(match args.mode {
                Mode::Latency => 20,
                Mode::Throughput => ((4u64 << 20) / size).clamp(1, 1000),
            });
            for cu in &cus {
                cu.reset_counters_for_bench();
            }
            world.barrier();
            let start = Instant::now();
            let mut results: BTreeMap<String, Result_> = cus
                .iter()
                .map(|c| {
                    (
                        c.name.clone(),
                        Result_ {
                            byte_errors: 0,
                            failed: 0,
                            cycles: 0,
                            latency_cycles: 0,
                        },
                    )
                })
                .collect();
            let per_message = args.mode == Mode::Latency;
            let batches: Vec<(u64, u64)> = if per_message {
                (0..iterations).map(|m| (m, m + 1)).collect()
            } else {
                vec![(0, iterations)]
            };
            for (from, to) in batches {
                if per_message {
                    for c in &cus {
                        c.rx_link().unwrap().reset_timing();
                    }
                    world.barrier();
                }
                let senders: Vec<_> = cus
                    .iter()
                    .map(|c| {
                        let c = c.clone();
                        let s = seed(&d.device, c.port);
                        std::thread::spawn(move || -> Result<()> {
                            for m in from..to {
                                for w in 0..words {
                                    let data = (0..width as usize)
                                        .map(|j| pattern(s, m, w * width as usize + j))
                                        .collect();
                                    c.transmit(Beat::new(data))?;
                                }
                                c.flush_tx()?;
                            }
                            Ok(())
                        })
                    })
                    .collect();
                for c in &cus {
                    let (pd, pp) = peer_of(&d, c).unwrap_or((d.device.clone(), c.port));
                    let s = seed(&pd, pp);
                    let r = results.get_mut(&c.name).unwrap();
                    for m in from..to {
                        let mut errors = 0;
                        for w in 0..words {
                            let beat = c.receive()?.ok_or_else(|| {
                                anyhow::anyhow!("link into {} closed mid-message", c.name)
                            })?;
                            for (j, b) in beat.data.iter().enumerate() {
                                if *b != pattern(s, m, w * width as usize + j) {
                                    errors += 1;
                                }
                            }
                            if args.throttle_us > 0 && w % 64 == 63 {
                                std::thread::sleep(Duration::from_micros(args.throttle_us));
                            }
                        }
                        r.byte_errors += errors;
                        r.failed += (errors > 0) as u64;
                    }
                    let t = c.rx_link().unwrap().timing();
                    if let (Some(s0), Some(a0), Some(a1)) = (
                        t.first_send_cycle,
                        t.first_arrival_cycle,
                        t.last_arrival_cycle,
                    ) {
                        r.cycles += a1 - s0 + 1;
                        r.latency_cycles += a0 - s0;
                    }
                }
                for s in senders {
                    s.join()
                        .map_err(|_| anyhow::anyhow!("sender thread panicked"))??;
                }
            }
            let wall = start.elapsed().as_secs_f64();
            world.barrier();
            for c in &cus {
                let r = &results[&c.name];
                let k = AuroraFlow::new(c.name.clone(), &**c).counters()?;
                let seconds = r.cycles as f64 / (LINK_CLOCK_MHZ * 1e6);
                let latency = if per_message {
                    r.latency_cycles as f64 / iterations as f64 / (LINK_CLOCK_MHZ * 1e6)
                } else {
                    r.latency_cycles as f64 / (LINK_CLOCK_MHZ * 1e6)
                };
                let gbit = (size * iterations) as f64 * 8.0 / seconds / 1e9;
                let values: Vec<String> = vec![
                    host.clone(),
                    job.clone(),
                    commit.clone(),
                    "sim".into(),
                    d.device.clone(),
                    rank.rank.to_string(),
                    c.name.clone(),
                    rep.to_string(),
                    testmode.to_string(),
                    "0".into(),
                    size.to_string(),
                    iterations.to_string(),
                    ((args.throttle_us > 0) as u8).to_string(),
                    format!("{seconds:.9}"),
                    k.rx_count.to_string(),
                    k.tx_count.to_string(),
                    r.failed.to_string(),
                    k.fifo_rx_overflow.to_string(),
                    k.fifo_tx_overflow.to_string(),
                    k.nfc_full_trigger.to_string(),
                    k.nfc_empty_trigger.to_string(),
                    k.nfc_latency.to_string(),
                    r.byte_errors.to_string(),
                    k.gt_not_ready[0].to_string(),
                    k.gt_not_ready[1].to_string(),
                    k.gt_not_ready[2].to_string(),
                    k.gt_not_ready[3].to_string(),
                    k.line_down[0].to_string(),
                    k.line_down[1].to_string(),
                    k.line_down[2].to_string(),
                    k.line_down[3].to_string(),
                    k.pll_not_locked.to_string(),
                    k.mmcm_not_locked.to_string(),
                    k.hard_err.to_string(),
                    k.soft_err.to_string(),
                    k.channel_down.to_string(),
                    k.frames_received.to_string(),
                    k.frames_with_errors.to_string(),
                    format!("{latency:.9}"),
                    format!("{gbit:.3}"),
                    format!("{wall:.6}"),
                ];
                rows.push(values.join(","));
            }
            bar.inc(1);
        }
    }
    bar.finish_and_clear();
    Ok(rows)
}
