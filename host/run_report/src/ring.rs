//! The record `aurora-host bench` writes on a ring of pass-through cards (hops.json): per
//! message size the path of each benchmarked lane and every hop's counters and modelled
//! times, read on every rank after the size's runs.

use serde::{Deserialize, Serialize};

/// One message size (one repetition) on the ring.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Sample {
    pub mode: String,
    pub message_size: u64,
    pub repetition: u32,
    pub iterations: u64,
    /// The clock the hops' cycles count (the Aurora user clock of the link model).
    pub link_clock_mhz: f64,
    /// Per receiving port of a benchmarking card: the path, its words and the ring's figures.
    pub lanes: Vec<RingLane>,
    pub hops: Vec<Hop>,
    /// Cables whose ends disagree or that lost words (empty: consistent).
    pub inconsistent: Vec<String>,
}

/// What came back to one receiving port of a benchmarking card after the whole ring.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RingLane {
    /// "fpga0:0": the receiving device and port.
    pub receiver: String,
    /// "fpga0:1": the port that sent the words.
    pub origin: String,
    pub hops: usize,
    pub byte_errors: u64,
    /// Modelled: every hop's first-word latency, per message.
    pub latency_s: f64,
    /// Modelled: the message's bytes over every hop's latency plus the longest hop's stream.
    pub throughput_gbit_s: f64,
}

/// One hop after a message size: the receiving end's counters and modelled times, and what
/// the sending end counted.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Hop {
    pub device: String,
    pub rank: i32,
    pub host: String,
    pub port: u32,
    /// "fpga3:1": the cable's sending end.
    pub from: String,
    /// Words this port's transmitter sent (TX_COUNT), for the next hop's check.
    pub tx_count: u32,
    pub rx_count: u32,
    pub xoff: u32,
    pub xon: u32,
    pub nfc_latency: u32,
    pub rx_overflow: u32,
    /// FRAMES_RECEIVED: TLASTs this port received (framing mode; 0 in streaming mode).
    #[serde(default)]
    pub frames: u32,
    /// Modelled link cycles from the first word sent to its arrival, summed over the runs.
    pub first_cycles: u64,
    /// Modelled link cycles from the first word's arrival to the last's, summed over the runs.
    pub span_cycles: u64,
}

impl Sample {
    /// Runs the hops' cycle sums are taken over: one per message in latency mode (one
    /// acknowledged message per run), one in throughput mode (all messages in one run).
    pub fn runs(&self) -> u64 {
        if self.mode == "latency" {
            self.iterations.max(1)
        } else {
            1
        }
    }

    /// A hop's modelled first-word latency per run, ns.
    pub fn hop_latency_ns(&self, h: &Hop) -> f64 {
        h.first_cycles as f64 / self.runs() as f64 / self.link_clock_mhz * 1e3
    }
}

/// Reads hops.json.
pub fn read(path: &std::path::Path) -> anyhow::Result<Vec<Sample>> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| anyhow::anyhow!("{}: cannot read the ring record: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| {
        anyhow::anyhow!(
            "{}:{}:{}: not a ring record ({e}); it is written by `aurora-host bench` on a ring",
            path.display(),
            e.line(),
            e.column()
        )
    })
}
