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
//!
//! `run` reads as the steps of a run: the cable ends every rank learns, the link model set
//! up, the lanes opened (`lanes`), the links begun, then per message size and repetition
//! (`measure`) the message rounds (`message`), every hop's counters and one CSV row per
//! lane (`csv`).

mod csv;
mod lanes;
mod measure;
mod message;
mod pattern;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Result};
use fpga_device::sim::aurora_cu::AuroraCu;
use fpga_device::Device;
use mpi::topology::{Communicator, SimpleCommunicator};
use xclbin::DeviceDescription;

pub use self::csv::CSV_COLUMNS;
use crate::ring::{self, Sample};
use crate::setup::Rank;

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

pub use auroraforge_host::link_config::peer_of;

/// One message size (and repetition) on a ring, every hop of it.
pub struct Outcome {
    pub rows: Vec<String>,
    /// On a ring: every size's hops (on every rank).
    pub samples: Vec<Sample>,
    /// On a ring, what went wrong (bytes differ after the ring, cable ends disagree, words lost).
    pub failure: Option<String>,
}

/// What every step of a run reads: this rank's device and arguments, the cable ends every
/// rank agreed on, and the run's fixed CSV columns.
struct Bench<'a> {
    world: &'a SimpleCommunicator,
    rank: i32,
    d: &'a DeviceDescription,
    args: &'a BenchArgs,
    /// The simulated AuroraFlow CUs by QSFP port (none on cards).
    aurora: &'a BTreeMap<u32, Arc<AuroraCu>>,
    cabled: &'a [(u32, String)],
    ends: &'a [ring::End],
    host: &'a str,
    job: String,
    commit: String,
    /// 0: loopback (every link on this card), 1: between cards.
    testmode: u8,
    /// The link model is there on simulated links only: there the times are its cycles.
    modelled: bool,
    on_ring: bool,
    /// Latency: one acknowledged message per run; throughput: all in one run.
    per_message: bool,
    /// send.cpp's ack_mode.
    ack_mode: u64,
    /// The widest stream of the send kernels, bytes.
    width: u64,
    timeout: Duration,
}

pub fn run(
    world: &SimpleCommunicator,
    rank: &mut Rank,
    args: &BenchArgs,
    timeout: Duration,
) -> Result<Outcome> {
    let d = rank.device.description()?.clone();
    let cabled = lanes::cabled_cus(&d);
    if cabled.is_empty() {
        bail!(
            "device {}: no cabled AuroraFlow CU (check the deployment's topology)",
            d.device
        );
    }
    let host = hostname();
    let ends = cable_ends(world, rank.rank, &d, &cabled, &host)?;
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
    let modelled = !rank.aurora.is_empty();
    auroraforge_host::link_model::set_up(&rank.aurora, d.clock_mhz, args.throttle_us, modelled)?;
    let device: &mut dyn Device = &mut *rank.device;
    let (mut lanes, width) = lanes::open(device, &d, &cabled, passes, &ends, max_size)?;
    check_widths(&sizes, width)?;
    begin_links(device, &d, &cabled, passes)?;
    let bar = progress_bar(rank.rank, sizes.len() as u64 * args.repetitions as u64);
    let per_message = args.mode == Mode::Latency;
    let testmode = testmode(&d);
    let b = Bench {
        world,
        rank: rank.rank,
        d: &d,
        args,
        aurora: &rank.aurora,
        cabled: &cabled,
        ends: &ends,
        host: &host,
        job: std::env::var("SLURM_JOB_ID").unwrap_or_default(),
        commit: std::env::var("AURORAFORGE_COMMIT").unwrap_or_default(),
        testmode,
        modelled,
        on_ring: ends.iter().any(|e| e.feeds.is_some()),
        per_message,
        ack_mode: ack_mode(per_message, testmode),
        width,
        timeout,
    };
    // every rank's links and kernels take part: from here on messages go round
    crate::idle::barrier(world);
    if rank.rank == 0 {
        announce(&b);
    }
    let mut rows = Vec::new();
    let mut samples = Vec::new();
    let mut sent = 0u64;
    for &size in &sizes {
        for rep in 0..args.repetitions {
            bar.set_message(format!("{size} B"));
            let (r, sample) = measure::run_size(&b, device, &mut lanes, &mut sent, size, rep)?;
            rows.extend(r);
            samples.extend(sample);
            bar.inc(1);
        }
    }
    device.end_free_running(timeout)?;
    bar.finish_and_clear();
    let failure = failure_of(&samples);
    Ok(Outcome {
        rows,
        samples,
        failure,
    })
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// 0: loopback (every link of this card ends on it), 1: between cards.
fn testmode(d: &DeviceDescription) -> u8 {
    if d.links.iter().all(|l| l.peer_device == d.device) {
        0
    } else {
        1
    }
}

/// send.cpp: ack_mode 0 acknowledges through recv on the same card (loopback), 1 through
/// the peer card's (pair); throughput runs without acknowledges (2).
fn ack_mode(per_message: bool, testmode: u8) -> u64 {
    match (per_message, testmode) {
        (false, _) => 2,
        (true, 0) => 0,
        (true, _) => 1,
    }
}

fn mode_name(mode: Mode) -> String {
    format!("{mode:?}").to_lowercase()
}

/// The message sizes: powers of two from `--min-bytes` (rounded up) to `--max-bytes`.
fn sizes(args: &BenchArgs) -> Vec<u64> {
    let mut s = Vec::new();
    let mut n = args.min_bytes.next_power_of_two();
    while n <= args.max_bytes {
        s.push(n);
        n *= 2;
    }
    s
}

/// Every rank learns every cable end (and where pass-through cards forward): the path of
/// each message, and on a ring its hops.
fn cable_ends(
    world: &SimpleCommunicator,
    rank: i32,
    d: &DeviceDescription,
    cabled: &[(u32, String)],
    host: &str,
) -> Result<Vec<ring::End>> {
    let forwarding = ring::forwarding(d);
    let mine: Vec<ring::End> = cabled
        .iter()
        .map(|(port, cu)| ring::End {
            device: d.device.clone(),
            rank,
            host: host.to_string(),
            port: *port,
            from: peer_of(d, cu, *port).expect("cabled"),
            feeds: forwarding.get(port).copied(),
        })
        .collect();
    let mut ends = Vec::new();
    for t in crate::gather::to_all(world, &serde_json::to_string(&mine)?) {
        ends.extend(serde_json::from_str::<Vec<ring::End>>(&t)?);
    }
    Ok(ends)
}

/// The links (and a pass-through card's forward CUs) take part from now on (a card's run
/// since the xclbin was loaded).
fn begin_links(
    device: &mut dyn Device,
    d: &DeviceDescription,
    cabled: &[(u32, String)],
    passes: bool,
) -> Result<()> {
    for (_, cu) in cabled {
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
    Ok(())
}

/// Every message size must be whole words of the widest send stream.
fn check_widths(sizes: &[u64], width: u64) -> Result<()> {
    for s in sizes {
        if s % width != 0 {
            bail!("message size {s} B is not a multiple of the {width} B stream width");
        }
    }
    Ok(())
}

/// Rank 0 says the run begins: the mode, the ranks and the cable ends.
fn announce(b: &Bench) {
    println!(
        "bench {}: {} rank(s) ready, {} cable end(s){}",
        mode_name(b.args.mode),
        b.world.size(),
        b.ends.len(),
        if b.on_ring { " on a ring" } else { "" }
    );
}

/// Rank 0 shows the sizes' progress; the other ranks' bars are hidden.
fn progress_bar(rank: i32, steps: u64) -> indicatif::ProgressBar {
    if rank == 0 {
        let b = indicatif::ProgressBar::new(steps);
        b.set_style(indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}").unwrap());
        b
    } else {
        indicatif::ProgressBar::hidden()
    }
}

/// On a ring, what went wrong: bytes that differ after the ring, cable ends that disagree.
fn failure_of(samples: &[Sample]) -> Option<String> {
    let mut failure = Vec::new();
    for s in samples {
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
    (!failure.is_empty()).then(|| failure.join("; "))
}
