//! One message size and repetition of a run: the message rounds over every lane, every
//! hop's counters gathered on every rank, the lanes' modelled (or wall-clock) times, one CSV
//! row per lane and, on a ring, the size's sample.

use anyhow::Result;
use aurora::AuroraFlow;
use fpga_device::sim::link::LINK_CLOCK_MHZ;
use fpga_device::{CuRegisters, Device};

use super::lanes::Lane;
use super::message::{self, HopTimes, Round};
use super::{csv, mode_name, peer_of, Bench, Mode};
use crate::ring::{self, Hop, RingLane, Sample};

/// The AuroraFlow CU `cu`, through its registers.
fn aurora_flow<'d>(
    device: &'d dyn Device,
    cu: &str,
) -> AuroraFlow<CuRegisters<'d, dyn Device + 'd>> {
    AuroraFlow::new(
        cu.to_string(),
        CuRegisters {
            device,
            cu: cu.to_string(),
        },
    )
}

/// One message size and repetition over every lane (`sent`: the messages sent so far, the
/// pattern's message number): the message rounds, every hop's counters, one CSV row per lane
/// and, on a ring, the size's sample.
pub(super) fn run_size(
    b: &Bench,
    device: &mut dyn Device,
    lanes: &mut [Lane],
    sent: &mut u64,
    size: u64,
    rep: u32,
) -> Result<(Vec<String>, Option<Sample>)> {
    let iterations = b.args.iterations.unwrap_or(match b.args.mode {
        Mode::Latency => 20,
        Mode::Throughput => ((4u64 << 20) / size).clamp(1, 1000),
    });
    for l in lanes.iter_mut() {
        (l.byte_errors, l.failed) = (0, 0);
    }
    for (_, cu) in b.cabled {
        aurora_flow(&*device, cu).reset_counters()?;
    }
    let mut hop_time = HopTimes::default();
    crate::idle::barrier(b.world);
    let (runs, per_run) = if b.per_message {
        (iterations, 1)
    } else {
        (1, iterations)
    };
    // Latency: TLAST on every message's last word (send.cpp's frame_size), which ends the
    // message on the link before its acknowledge is awaited. On a ring throughput messages
    // end with TLAST too: the pass-through cards end their packet there (forward.cpp moves
    // one packet per call).
    let frame_size = if b.per_message || b.on_ring {
        size / b.width
    } else {
        0
    };
    let round = Round {
        size,
        per_run,
        frame_size,
        budget: b.timeout * (per_run.min(1000) as u32 + 10),
    };
    let mut wall = 0.0;
    for _ in 0..runs {
        *sent += 1;
        wall += message::send(b, device, lanes, &round, *sent, &mut hop_time)?;
    }
    let hops = gather_hops(b, &*device, &hop_time)?;
    let mut rows = Vec::new();
    let mut ring_lanes = Vec::new();
    for l in lanes.iter() {
        let k = aurora_flow(&*device, &l.cu).counters()?;
        let (ring_lane, seconds, latency) = lane_times(b, l, &hops, iterations, size, wall)?;
        rows.push(csv::row(
            b,
            &csv::Measured {
                lane: l,
                counters: &k,
                repetition: rep,
                frame_size,
                size,
                iterations,
                seconds,
                latency,
                gbit: ring_lane.throughput_gbit_s,
                wall,
            },
        ));
        ring_lanes.push(ring_lane);
    }
    let sample = b.on_ring.then(|| Sample {
        mode: mode_name(b.args.mode),
        message_size: size,
        repetition: rep,
        iterations,
        link_clock_mhz: LINK_CLOCK_MHZ,
        lanes: ring_lanes,
        inconsistent: ring::inconsistencies(&hops),
        hops,
    });
    Ok((rows, sample))
}

/// Every hop's counters and modelled times of this size, on every rank.
fn gather_hops(b: &Bench, device: &dyn Device, hop_time: &HopTimes) -> Result<Vec<Hop>> {
    let mut mine = Vec::new();
    for (port, cu) in b.cabled {
        let k = aurora_flow(device, cu).counters()?;
        let from = peer_of(b.d, cu, *port).expect("cabled");
        let (first_cycles, span_cycles) = hop_time.get(port).copied().unwrap_or_default();
        mine.push(Hop {
            device: b.d.device.clone(),
            rank: b.rank,
            host: b.host.to_string(),
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
    for t in crate::gather::to_all(b.world, &serde_json::to_string(&mine)?) {
        hops.extend(serde_json::from_str::<Vec<Hop>>(&t)?);
    }
    Ok(hops)
}

/// What lane `l` measured over this size: its ring lane (throughput included), the
/// transmission's seconds and the per-message latency. Modelled: every hop's first-word
/// latency and the longest hop's stream (one hop on a cable between two benchmarking
/// cards); on cards the host's wall clock.
fn lane_times(
    b: &Bench,
    l: &Lane,
    hops: &[Hop],
    iterations: u64,
    size: u64,
    wall: f64,
) -> Result<(RingLane, f64, f64)> {
    let (path, _) = ring::path(b.ends, &b.d.device, l.port)?;
    let path: Vec<&Hop> = path
        .iter()
        .filter_map(|e| {
            hops.iter()
                .find(|h| h.device == e.device && h.port == e.port)
        })
        .collect();
    let (first, total) = ring::ring_cycles(&path);
    let (seconds, latency) = if b.modelled {
        let per = if b.per_message { iterations } else { 1 };
        (
            total as f64 / (LINK_CLOCK_MHZ * 1e6),
            first as f64 / per as f64 / (LINK_CLOCK_MHZ * 1e6),
        )
    } else {
        (wall, wall / iterations as f64)
    };
    let gbit = (size * iterations) as f64 * 8.0 / seconds / 1e9;
    let lane = RingLane {
        receiver: format!("{}:{}", b.d.device, l.port),
        origin: format!("{}:{}", l.origin.0, l.origin.1),
        hops: path.len(),
        byte_errors: l.byte_errors,
        latency_s: latency,
        throughput_gbit_s: gbit,
    };
    Ok((lane, seconds, latency))
}
