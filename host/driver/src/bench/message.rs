//! One message round of a run: every lane's pattern written, every receiver of every rank
//! started before any sender, the runs waited for as the public host does, what arrived
//! compared with what was sent, and the simulated links' modelled hop times added up.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::Result;
use fpga_device::{Device, KernelArg, RunId};

use super::lanes::Lane;
use super::pattern::{message_bytes, seed};
use super::Bench;
use crate::link_config::kernel_args;
use crate::setup::wait_runs;

/// Per cabled port: the modelled (first-word latency, stream) cycles of what arrived.
pub(super) type HopTimes = BTreeMap<u32, (u64, u64)>;

/// What one run of the benchmark kernels moves: `per_run` messages of `size` bytes (one
/// acknowledged message when measuring latency, all of them at once for throughput).
pub(super) struct Round {
    pub size: u64,
    pub per_run: u64,
    /// send.cpp's frame_size: TLAST every this many words (0: none).
    pub frame_size: u64,
    /// How long each kernel run may take.
    pub budget: Duration,
}

/// Sends message number `message` over every lane and checks what arrived; adds the
/// simulated links' hop times to `hop_time`. Returns the host's wall seconds of the run.
pub(super) fn send(
    b: &Bench,
    device: &mut dyn Device,
    lanes: &mut [Lane],
    round: &Round,
    message: u64,
    hop_time: &mut HopTimes,
) -> Result<f64> {
    for l in lanes.iter() {
        let data = message_bytes(seed(&b.d.device, l.port), message, round.size as usize);
        device.write_buffer(l.send_buf, 0, &data)?;
    }
    if b.modelled && b.per_message {
        for c in b.aurora.values() {
            if let Some(link) = c.rx_link() {
                link.reset_timing();
            }
        }
    }
    crate::idle::barrier(b.world);
    let recvs = start_receivers(b, device, lanes, round)?;
    // Every receiver of every rank runs before any sender starts.
    crate::idle::barrier(b.world);
    let t0 = Instant::now();
    let sends = start_senders(b, device, lanes, round)?;
    // as the public host: the receivers first, then the senders
    wait_runs(device, &recvs, Instant::now(), round.budget)?;
    wait_runs(device, &sends, Instant::now(), round.budget)?;
    let wall = t0.elapsed().as_secs_f64();
    compare(device, lanes, round.size, message)?;
    // a pass-through card's forward CU that failed ends the run here
    device.check_free_running()?;
    // The pattern of the next message is written once every rank compared (and the message
    // has passed every hop).
    crate::idle::barrier(b.world);
    add_hop_times(b, hop_time);
    Ok(wall)
}

fn start_receivers(
    b: &Bench,
    device: &mut dyn Device,
    lanes: &[Lane],
    round: &Round,
) -> Result<Vec<RunId>> {
    let mut recvs = Vec::new();
    for l in lanes {
        let a = kernel_args(
            b.d,
            &l.recv,
            &[
                ("data_output", KernelArg::Buffer(l.recv_buf)),
                ("byte_size", KernelArg::Scalar(round.size)),
                ("iterations", KernelArg::Scalar(round.per_run)),
                ("ack_mode", KernelArg::Scalar(b.ack_mode)),
            ],
            "bench",
            "AuroraFlow's send/recv ports: hw/hls/send.cpp, recv.cpp",
        )?;
        recvs.push(device.start(&l.recv, &a)?);
    }
    Ok(recvs)
}

fn start_senders(
    b: &Bench,
    device: &mut dyn Device,
    lanes: &[Lane],
    round: &Round,
) -> Result<Vec<RunId>> {
    let mut sends = Vec::new();
    for l in lanes {
        let a = kernel_args(
            b.d,
            &l.send,
            &[
                ("data_input", KernelArg::Buffer(l.send_buf)),
                ("byte_size", KernelArg::Scalar(round.size)),
                ("frame_size", KernelArg::Scalar(round.frame_size)),
                ("iterations", KernelArg::Scalar(round.per_run)),
                ("ack_mode", KernelArg::Scalar(b.ack_mode)),
            ],
            "bench",
            "AuroraFlow's send/recv ports: hw/hls/send.cpp, recv.cpp",
        )?;
        sends.push(device.start(&l.send, &a)?);
    }
    Ok(sends)
}

/// Counts the bytes of each lane's receive buffer that differ from its origin's pattern.
fn compare(device: &mut dyn Device, lanes: &mut [Lane], size: u64, message: u64) -> Result<()> {
    for l in lanes.iter_mut() {
        let mut got = vec![0u8; size as usize];
        device.read_buffer(l.recv_buf, 0, &mut got)?;
        let want = message_bytes(seed(&l.origin.0, l.origin.1), message, size as usize);
        let errors = got.iter().zip(&want).filter(|(a, b)| a != b).count() as u64;
        l.byte_errors += errors;
        l.failed += (errors > 0) as u64;
    }
    Ok(())
}

/// The simulated links' timing of the message that just arrived, per cabled port (none on
/// cards: there is no link model).
fn add_hop_times(b: &Bench, hop_time: &mut HopTimes) {
    for (port, _) in b.cabled {
        let Some(t) = b.aurora.get(port).and_then(|c| c.rx_link()) else {
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
