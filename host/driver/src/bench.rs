//! `bench latency|throughput`: AuroraFlow's link benchmark (the host program of
//! pc2/AuroraFlow's test application) through the device interface, on the cards and the
//! simulated devices by the same calls: per cabled AuroraFlow CU its `send` and `recv`
//! kernels (hw/hls/send.cpp, recv.cpp, joined to the CU's streams by the link
//! configuration) get their buffers in the banks the configuration assigns, the pattern is
//! written, every recv CU is started before any send CU, the runs are waited for, the
//! received bytes are read back and compared, the counters read through the CU's
//! registers, and one CSV row per receiving CU and size is written with AuroraFlow's
//! columns. Times: on simulated links the modelled link time (cycles of the Aurora user
//! clock); on cards the host's wall clock around the runs.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use aurora::AuroraFlow;
use fpga_device::sim::link::LINK_CLOCK_MHZ;
use fpga_device::{BufferId, CuRegisters, Device, KernelArg};
use mpi::topology::{Communicator, SimpleCommunicator};
use xclbin::DeviceDescription;

use crate::link_config::{bank, kernel_args, stream_peer};
use crate::ring::{self, Hop, RingLane, Sample};
use crate::setup::{wait_runs, Rank};

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
    // added: per-message latency and throughput (modelled link time on simulated links,
    // the host's wall clock on cards), the host's wall time around the runs
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
    /// What the CSV's `xrt_version` column says: the backend the rows were measured on.
    pub backend: String,
}

/// Who sends into the AuroraFlow CU `cu` on QSFP `port`: its link's other end.
pub fn peer_of(d: &DeviceDescription, cu: &str, port: u32) -> Option<(String, u32)> {
    if let Some(l) = d.links.iter().find(|l| l.cu == cu) {
        return Some((l.peer_device.clone(), l.peer_port));
    }
    d.links
        .iter()
        .find(|l| l.peer_device == d.device && l.peer_port == port)
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

fn message_bytes(seed: u32, message: u64, size: usize) -> Vec<u8> {
    (0..size).map(|i| pattern(seed, message, i)).collect()
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

/// One cabled AuroraFlow CU with the benchmark kernels on its streams and their buffers.
struct Lane {
    /// The AuroraFlow CU and its QSFP port.
    cu: String,
    port: u32,
    send: String,
    recv: String,
    send_buf: BufferId,
    recv_buf: BufferId,
    /// Whose pattern recv must hold: the sending port (device, port) the message left by,
    /// the cable's other end or, on a ring, the last card before the pass-through ones.
    origin: (String, u32),
    byte_errors: u64,
    failed: u64,
}

/// One message size (and repetition) on a ring, every hop of it.
pub struct Outcome {
    pub rows: Vec<String>,
    /// On a ring: every size's hops (on every rank).
    pub samples: Vec<Sample>,
    /// On a ring, what went wrong (bytes differ after the ring, cable ends disagree, words lost).
    pub failure: Option<String>,
}

/// This device's cabled AuroraFlow CUs (QSFP port, CU name), by port.
fn cabled_cus(d: &DeviceDescription) -> Vec<(u32, String)> {
    let mut out: Vec<(u32, String)> = d
        .kernels
        .iter()
        .filter(|k| k.kind == "rtl" && k.kernel.starts_with("aurora_flow"))
        .filter_map(|k| {
            let port = k
                .params
                .get("instance")
                .and_then(|v| v.as_u64())
                .or_else(|| k.cu.rsplit('_').next().and_then(|s| s.parse().ok()))?
                as u32;
            peer_of(d, &k.cu, port).map(|_| (port, k.cu.clone()))
        })
        .collect();
    out.sort();
    out
}

/// The send and recv CUs on `cu`'s streams, refused with what to change when missing.
fn bench_kernels(d: &DeviceDescription, cu: &str) -> Result<(String, String)> {
    let find = |endpoint: String, want: &str| -> Result<String> {
        let other = stream_peer(d, &endpoint).with_context(|| {
            format!(
                "device {} ({}): {endpoint} is not connected to a benchmark kernel in the link configuration: bench needs AuroraFlow's send/recv kernels on every cabled port (a deployment with app = \"aurora_bench\" and role = \"bench\", e.g. deploy/aurora_pair.toml)",
                d.device, d.deployment
            )
        })?;
        let k = d
            .kernel(&other)
            .with_context(|| format!("device {}: no CU {other}", d.device))?;
        if k.kernel != want {
            bail!(
                "device {} ({}): {endpoint} is connected to {other} (kernel {}), not to AuroraFlow's {want} kernel: bench runs on a deployment with app = \"aurora_bench\" and role = \"bench\"",
                d.device,
                d.deployment,
                k.kernel
            );
        }
        Ok(other)
    };
    Ok((
        find(format!("{cu}.tx_axis"), "send")?,
        find(format!("{cu}.rx_axis"), "recv")?,
    ))
}

pub fn run(
    world: &SimpleCommunicator,
    rank: &mut Rank,
    args: &BenchArgs,
    timeout: Duration,
) -> Result<Outcome> {
    let d = rank.device.description()?.clone();
    let cabled = cabled_cus(&d);
    if cabled.is_empty() {
        bail!(
            "device {}: no cabled AuroraFlow CU (check the deployment's topology)",
            d.device
        );
    }
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap_or_default()
        .trim()
        .to_string();
    // Every rank learns every cable end (and where pass-through cards forward): the path
    // of each message, and on a ring its hops.
    let forwarding = ring::forwarding(&d);
    let mine: Vec<ring::End> = cabled
        .iter()
        .map(|(port, cu)| ring::End {
            device: d.device.clone(),
            rank: rank.rank,
            host: host.clone(),
            port: *port,
            from: peer_of(&d, cu, *port).expect("cabled"),
            feeds: forwarding.get(port).copied(),
        })
        .collect();
    let mut ends = Vec::new();
    for t in crate::gather::to_all(world, &serde_json::to_string(&mine)?) {
        ends.extend(serde_json::from_str::<Vec<ring::End>>(&t)?);
    }
    let on_ring = ends.iter().any(|e| e.feeds.is_some());
    // A pass-through card sends and receives nothing itself: its rank starts the forward
    // CUs, takes part in every step and reads its counters.
    let passes = ring::passes_through(&d, &cabled);
    let sizes = sizes(args);
    let Some(&max_size) = sizes.last() else {
        bail!(
            "bench: no message size between --min-bytes {} and --max-bytes {}",
            args.min_bytes,
            args.max_bytes
        );
    };
    // The link model is there on simulated links only: there the times are its cycles.
    let modelled = !rank.aurora.is_empty();
    if args.throttle_us > 0 && !modelled {
        bail!(
            "--throttle-us slows the simulated receiving kernel; on a card AuroraFlow's recv reads at one word per cycle (run without it)"
        );
    }
    for c in rank.aurora.values() {
        // Without --throttle-us the receiving kernel is AuroraFlow's recv, always ready at
        // one word per ap_clk cycle; with it, a slow one (the RX FIFO fills).
        let link = c.rx_link();
        if let Some(l) = &link {
            l.set_consumer_rate((args.throttle_us == 0).then(|| d.clock_mhz / LINK_CLOCK_MHZ));
        }
        c.set_rx_throttle(Duration::from_micros(args.throttle_us));
    }
    let device: &mut dyn Device = &mut *rank.device;
    let mut width = 1u64;
    let mut lanes = Vec::new();
    for (port, cu) in cabled.iter().filter(|_| !passes) {
        let (send, recv) = bench_kernels(&d, cu)?;
        let w = d
            .kernel(&send)
            .and_then(|k| k.ports.iter().find(|p| p.name == "data_output"))
            .map_or(64, |p| (p.width / 8).max(1) as u64);
        width = width.max(w);
        // Buffers of the largest message, in the banks the link configuration names.
        let send_buf = device.alloc(&bank(&d, &send)?, max_size as usize)?;
        let recv_buf = device.alloc(&bank(&d, &recv)?, max_size as usize)?;
        lanes.push(Lane {
            cu: cu.clone(),
            port: *port,
            send,
            recv,
            send_buf,
            recv_buf,
            origin: ring::path(&ends, &d.device, *port)?.1,
            byte_errors: 0,
            failed: 0,
        });
    }
    for s in &sizes {
        if s % width != 0 {
            bail!("message size {s} B is not a multiple of the {width} B stream width");
        }
    }
    // The links (and a pass-through card's forward CUs) take part from now on (a card's
    // run since the xclbin was loaded).
    for (_, cu) in &cabled {
        device.begin_free_running(cu)?;
    }
    if passes {
        for k in d
            .kernels
            .iter()
            .filter(|k| k.kernel == ring::FORWARD_KERNEL)
        {
            device.begin_free_running(&k.cu)?;
        }
    }
    let bar = if rank.rank == 0 {
        let b = indicatif::ProgressBar::new(sizes.len() as u64 * args.repetitions as u64);
        b.set_style(indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").unwrap());
        b
    } else {
        indicatif::ProgressBar::hidden()
    };
    let job = std::env::var("SLURM_JOB_ID").unwrap_or_default();
    let commit = std::env::var("AURORAFORGE_COMMIT").unwrap_or_default();
    let testmode = if d.links.iter().all(|l| l.peer_device == d.device) {
        0
    } else {
        1
    };
    let per_message = args.mode == Mode::Latency;
    // every rank's links and kernels take part: from here on messages go round
    crate::idle::barrier(world);
    if rank.rank == 0 {
        println!(
            "bench {}: {} rank(s) ready, {} cable end(s){}",
            format!("{:?}", args.mode).to_lowercase(),
            world.size(),
            ends.len(),
            if on_ring { " on a ring" } else { "" }
        );
    }
    // send.cpp: ack_mode 0 acknowledges through recv on the same card (loopback), 1 through
    // the peer card's (pair); throughput runs without acknowledges (2).
    let ack_mode = match (per_message, testmode) {
        (false, _) => 2,
        (true, 0) => 0,
        (true, _) => 1,
    };
    let mut rows = Vec::new();
    let mut samples = Vec::new();
    let mut message = 0u64;
    for &size in &sizes {
        for rep in 0..args.repetitions {
            bar.set_message(format!("{size} B"));
            let iterations = args.iterations.unwrap_or(match args.mode {
                Mode::Latency => 20,
                Mode::Throughput => ((4u64 << 20) / size).clamp(1, 1000),
            });
            for l in &mut lanes {
                (l.byte_errors, l.failed) = (0, 0);
            }
            for (_, cu) in &cabled {
                AuroraFlow::new(
                    cu.clone(),
                    CuRegisters {
                        device: &*device,
                        cu: cu.clone(),
                    },
                )
                .reset_counters()?;
            }
            // per cabled port: modelled (first-word latency, stream) cycles of what arrived
            let mut hop_time: std::collections::BTreeMap<u32, (u64, u64)> = Default::default();
            crate::idle::barrier(world);
            // Latency: one acknowledged message per run; throughput: all in one run.
            let (runs, per_run) = if per_message {
                (iterations, 1)
            } else {
                (1, iterations)
            };
            // Latency: TLAST on every message's last word (send.cpp's frame_size), which ends
            // the message on the link before its acknowledge is awaited. On a ring
            // throughput messages end with TLAST too: the pass-through cards end their
            // packet there (forward.cpp moves one packet per call).
            let frame_size = if per_message || on_ring {
                size / width
            } else {
                0
            };
            let budget = timeout * (per_run.min(1000) as u32 + 10);
            let mut wall = 0.0;
            for _ in 0..runs {
                message += 1;
                for l in &lanes {
                    let data = message_bytes(seed(&d.device, l.port), message, size as usize);
                    device.write_buffer(l.send_buf, 0, &data)?;
                }
                if modelled && per_message {
                    for c in rank.aurora.values() {
                        if let Some(link) = c.rx_link() {
                            link.reset_timing();
                        }
                    }
                }
                crate::idle::barrier(world);
                let mut recvs = Vec::new();
                for l in &lanes {
                    let a = kernel_args(
                        &d,
                        &l.recv,
                        &[
                            ("data_output", KernelArg::Buffer(l.recv_buf)),
                            ("byte_size", KernelArg::Scalar(size)),
                            ("iterations", KernelArg::Scalar(per_run)),
                            ("ack_mode", KernelArg::Scalar(ack_mode)),
                        ],
                        "bench",
                        "AuroraFlow's send/recv ports: hw/hls/send.cpp, recv.cpp",
                    )?;
                    recvs.push(device.start(&l.recv, &a)?);
                }
                // Every receiver of every rank runs before any sender starts.
                crate::idle::barrier(world);
                let t0 = Instant::now();
                let mut sends = Vec::new();
                for l in &lanes {
                    let a = kernel_args(
                        &d,
                        &l.send,
                        &[
                            ("data_input", KernelArg::Buffer(l.send_buf)),
                            ("byte_size", KernelArg::Scalar(size)),
                            ("frame_size", KernelArg::Scalar(frame_size)),
                            ("iterations", KernelArg::Scalar(per_run)),
                            ("ack_mode", KernelArg::Scalar(ack_mode)),
                        ],
                        "bench",
                        "AuroraFlow's send/recv ports: hw/hls/send.cpp, recv.cpp",
                    )?;
                    sends.push(device.start(&l.send, &a)?);
                }
                // as the public host: the receivers first, then the senders
                wait_runs(device, &recvs, Instant::now(), budget)?;
                wait_runs(device, &sends, Instant::now(), budget)?;
                wall += t0.elapsed().as_secs_f64();
                for l in &mut lanes {
                    let mut got = vec![0u8; size as usize];
                    device.read_buffer(l.recv_buf, 0, &mut got)?;
                    let want = message_bytes(seed(&l.origin.0, l.origin.1), message, size as usize);
                    let errors = got.iter().zip(&want).filter(|(a, b)| a != b).count() as u64;
                    l.byte_errors += errors;
                    l.failed += (errors > 0) as u64;
                }
                // a pass-through card's forward CU that failed ends the run here
                device.check_free_running()?;
                // The pattern of the next message is written once every rank compared (and
                // the message has passed every hop).
                crate::idle::barrier(world);
                for (port, _) in &cabled {
                    let Some(t) = rank.aurora.get(port).and_then(|c| c.rx_link()) else {
                        continue;
                    };
                    let t = t.timing();
                    if let (Some(s0), Some(a0), Some(a1)) = (
                        t.first_send_cycle,
                        t.first_arrival_cycle,
                        t.last_arrival_cycle,
                    ) {
                        let e = hop_time.entry(*port).or_default();
                        e.0 += a0 - s0;
                        e.1 += a1 - a0 + 1;
                    }
                }
            }
            // every hop's counters, on every rank
            let mut mine = Vec::new();
            for (port, cu) in &cabled {
                let k = AuroraFlow::new(
                    cu.clone(),
                    CuRegisters {
                        device: &*device,
                        cu: cu.clone(),
                    },
                )
                .counters()?;
                let from = peer_of(&d, cu, *port).expect("cabled");
                let (first_cycles, span_cycles) = hop_time.get(port).copied().unwrap_or_default();
                mine.push(Hop {
                    device: d.device.clone(),
                    rank: rank.rank,
                    host: host.clone(),
                    port: *port,
                    from: format!("{}:{}", from.0, from.1),
                    tx_count: k.tx_count,
                    rx_count: k.rx_count,
                    xoff: k.nfc_full_trigger,
                    xon: k.nfc_empty_trigger,
                    nfc_latency: k.nfc_latency,
                    rx_overflow: k.fifo_rx_overflow,
                    frames: k.frames_received,
                    first_cycles,
                    span_cycles,
                });
            }
            let mut hops: Vec<Hop> = Vec::new();
            for t in crate::gather::to_all(world, &serde_json::to_string(&mine)?) {
                hops.extend(serde_json::from_str::<Vec<Hop>>(&t)?);
            }
            let mut ring_lanes = Vec::new();
            for l in &lanes {
                let k = AuroraFlow::new(
                    l.cu.clone(),
                    CuRegisters {
                        device: &*device,
                        cu: l.cu.clone(),
                    },
                )
                .counters()?;
                // modelled: every hop's first-word latency and the longest hop's stream
                // (one hop on a cable between two benchmarking cards)
                let (path, _) = ring::path(&ends, &d.device, l.port)?;
                let path: Vec<&Hop> = path
                    .iter()
                    .filter_map(|e| {
                        hops.iter()
                            .find(|h| h.device == e.device && h.port == e.port)
                    })
                    .collect();
                let (first, total) = ring::ring_cycles(&path);
                let (seconds, latency) = if modelled {
                    let per = if per_message { iterations } else { 1 };
                    (
                        total as f64 / (LINK_CLOCK_MHZ * 1e6),
                        first as f64 / per as f64 / (LINK_CLOCK_MHZ * 1e6),
                    )
                } else {
                    (wall, wall / iterations as f64)
                };
                let gbit = (size * iterations) as f64 * 8.0 / seconds / 1e9;
                ring_lanes.push(RingLane {
                    receiver: format!("{}:{}", d.device, l.port),
                    origin: format!("{}:{}", l.origin.0, l.origin.1),
                    hops: path.len(),
                    byte_errors: l.byte_errors,
                    latency_s: latency,
                    throughput_gbit_s: gbit,
                });
                let values: Vec<String> = vec![
                    host.clone(),
                    job.clone(),
                    commit.clone(),
                    args.backend.clone(),
                    d.device.clone(),
                    rank.rank.to_string(),
                    l.cu.clone(),
                    rep.to_string(),
                    testmode.to_string(),
                    frame_size.to_string(),
                    size.to_string(),
                    iterations.to_string(),
                    ((args.throttle_us > 0) as u8).to_string(),
                    format!("{seconds:.9}"),
                    k.rx_count.to_string(),
                    k.tx_count.to_string(),
                    l.failed.to_string(),
                    k.fifo_rx_overflow.to_string(),
                    k.fifo_tx_overflow.to_string(),
                    k.nfc_full_trigger.to_string(),
                    k.nfc_empty_trigger.to_string(),
                    k.nfc_latency.to_string(),
                    l.byte_errors.to_string(),
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
            if on_ring {
                samples.push(Sample {
                    mode: format!("{:?}", args.mode).to_lowercase(),
                    message_size: size,
                    repetition: rep,
                    iterations,
                    link_clock_mhz: LINK_CLOCK_MHZ,
                    lanes: ring_lanes,
                    inconsistent: ring::inconsistencies(&hops),
                    hops,
                });
            }
            bar.inc(1);
        }
    }
    device.end_free_running(timeout)?;
    bar.finish_and_clear();
    let mut failure = Vec::new();
    for s in &samples {
        for l in s.lanes.iter().filter(|l| l.byte_errors > 0) {
            failure.push(format!(
                "{} B: {} byte(s) at {} differ from what {} sent, after {} hops",
                s.message_size, l.byte_errors, l.receiver, l.origin, l.hops
            ));
        }
        for i in &s.inconsistent {
            failure.push(format!("{} B: {i}", s.message_size));
        }
    }
    Ok(Outcome {
        rows,
        samples,
        failure: (!failure.is_empty()).then(|| failure.join("; ")),
    })
}
