//! An emulated AuroraFlow link in one direction, modelled in Aurora user-clock cycles
//! (402.83 MHz, 32 B per cycle), with the kernel's flow control:
//!
//! sender TX FIFO -> serial channel (core + channel latency) -> receiver RX FIFO
//!
//! - the RX FIFO holds `rx_fifo_size / fifo_width` words; when its occupancy reaches
//!   `rx_fifo_prog_full` the receiver sends XOFF, when it falls to `rx_fifo_prog_empty`, XON;
//! - an NFC message needs the same latency as data to reach the sender, so the words already
//!   on the wire and those sent until the XOFF arrives still land ("in flight"); the most
//!   32 B link beats that arrived between an XOFF and its XON is NFC_LATENCY_COUNT;
//! - a word arriving at a full RX FIFO is lost and counted (FIFO_RX_OVERFLOW_COUNT);
//! - the sender's TX ready drops 1 cycle in 33 (64b/66b gearbox) and 8 cycles every 10 000
//!   (clock compensation), as the RTL's behavioural core does (hw/aurora_flow/README.md).
//!
//! Time only advances when someone needs progress (a sender blocked on a full TX FIFO, a
//! receiver on an empty RX FIFO): the receiver's kernel is as slow as it is in wall time,
//! which is the worst case for flow control. The model lives with the receiving CU; the
//! sender reaches it directly (same process) or through a transport (MPI between ranks).

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};
use serde_json::{Map, Value};

use super::stream::Beat;

use aurora::regs::link as phys;

/// Aurora 64B/66B user clock (hw/aurora_flow/kernel.toml [link]: line rate / 64), MHz.
pub const LINK_CLOCK_MHZ: f64 = phys::USER_CLK_MHZ;
pub const LINK_BEAT_BYTES: u32 = phys::BEAT_BYTES;
/// TX->RX latency of the core in user cycles (AMD PG074 "Latency": 54-55).
pub const CORE_LATENCY_CYCLES: u64 = 55;
/// Propagation in fibre: ~5 ns per metre (refractive index ~1.5).
pub const FIBRE_NS_PER_M: f64 = 5.0;

/// The cycles in which the sender serialises nothing (kernel.toml [link]): the gearbox's
/// pause (1 in 33) and clock compensation (8 of every 10 000), as the RTL's behavioural core.
pub fn tx_idle(cycle: u64) -> bool {
    cycle % phys::GEARBOX_PERIOD_CYCLES == phys::GEARBOX_PERIOD_CYCLES - 1
        || cycle % phys::CC_PERIOD_CYCLES < phys::CC_CYCLES
}

/// The period of `tx_idle`'s pattern (lcm of 33 and 10 000).
pub const TX_IDLE_PERIOD: u64 = lcm(phys::GEARBOX_PERIOD_CYCLES, phys::CC_PERIOD_CYCLES);

const fn lcm(a: u64, b: u64) -> u64 {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    a / x * b
}

#[derive(Debug, Clone, PartialEq)]
pub struct LinkParams {
    /// User stream word in bytes (32 or 64).
    pub fifo_width: u32,
    pub rx_depth: u32,
    pub prog_full: u32,
    pub prog_empty: u32,
    pub tx_depth: u32,
    /// Channel delay in link cycles, on top of the core latency.
    pub channel_cycles: u64,
    /// Longest a blocked side waits without any progress before failing.
    pub stall_timeout: Duration,
}

fn int(params: &Map<String, Value>, key: &str) -> Option<i64> {
    params.get(key).and_then(|v| v.as_i64())
}

impl LinkParams {
    /// From a kernel description's params (missing ones take kernel.toml's defaults) and
    /// the link's cable length or explicit `channel_cycles`.
    pub fn from_kernel(
        params: &Map<String, Value>,
        cable_m: f64,
        channel_cycles: Option<u64>,
    ) -> Result<LinkParams> {
        let default = |k: &str| aurora::regs::parameter_default(k).unwrap_or(0);
        let width = int(params, "fifo_width").unwrap_or_else(|| default("fifo_width"));
        let rx_size = int(params, "rx_fifo_size").unwrap_or_else(|| default("rx_fifo_size"));
        let tx_size = int(params, "tx_fifo_size").unwrap_or_else(|| default("tx_fifo_size"));
        if width != 32 && width != 64 {
            bail!("AuroraFlow fifo_width {width}: must be 32 or 64");
        }
        let rx_depth = (rx_size / width) as u32;
        // kernel.toml's derived defaults: prog_full = depth/2, prog_empty = depth/8.
        let prog_full = int(params, "rx_fifo_prog_full").map_or(rx_depth / 2, |v| v as u32);
        let prog_empty = int(params, "rx_fifo_prog_empty").map_or(rx_depth / 8, |v| v as u32);
        if prog_empty >= prog_full || prog_full >= rx_depth {
            bail!("AuroraFlow RX FIFO: need prog_empty ({prog_empty}) < prog_full ({prog_full}) < depth ({rx_depth})");
        }
        let channel_cycles = channel_cycles
            .unwrap_or_else(|| (cable_m * FIBRE_NS_PER_M * LINK_CLOCK_MHZ / 1000.0).round() as u64);
        Ok(LinkParams {
            fifo_width: width as u32,
            rx_depth,
            prog_full,
            prog_empty,
            tx_depth: (tx_size / width).max(2) as u32,
            channel_cycles,
            stall_timeout: Duration::from_secs(10),
        })
    }

    pub fn latency_cycles(&self) -> u64 {
        CORE_LATENCY_CYCLES + self.channel_cycles
    }

    fn beats_per_word(&self) -> u32 {
        self.fifo_width / LINK_BEAT_BYTES
    }
}

/// The RX-side counters of the RTL (and TX_COUNT of the sending CU for a local sender).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LinkCounters {
    pub tx_words: u32,
    pub rx_words: u32,
    pub xoff_sent: u32,
    pub xon_sent: u32,
    pub max_in_flight: u32,
    pub rx_overflow: u32,
    pub tx_almost_full_edges: u32,
}

/// Modelled timing of the traffic since the last `reset_counters`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LinkTiming {
    pub first_send_cycle: Option<u64>,
    pub first_arrival_cycle: Option<u64>,
    pub last_arrival_cycle: Option<u64>,
    pub cycle: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Occupancy {
    pub tx: u32,
    pub rx: u32,
}

struct State {
    cycle: u64,
    tx_fifo: VecDeque<Beat>,
    /// Link beats of the TX FIFO head already serialised.
    head_sent: u32,
    wire: VecDeque<(u64, Beat)>,
    rx_fifo: VecDeque<Beat>,
    /// NFC messages on their way to the sender: (arrival cycle, xoff?).
    nfc_wire: VecDeque<(u64, bool)>,
    sender_paused: bool,
    xoff_outstanding: bool,
    in_flight: u32,
    tx_almost_full: bool,
    counters: LinkCounters,
    timing: LinkTiming,
    sender_closed: bool,
    /// Receiving kernel modelled as always ready at this many words per link cycle (None:
    /// the receiving kernel is whoever calls recv(), at its own pace).
    consumer_rate: Option<f64>,
    consumer_credit: f64,
    /// Words the always-ready receiving kernel took, waiting for the host to collect them.
    delivered: VecDeque<Beat>,
    /// Mid-message: the producer streams at full rate, so the receiver waits for its next
    /// words instead of letting the link run dry (host-side feeding is not link time).
    sender_active: bool,
    receiver_waiting: bool,
    failed: Option<String>,
}

pub struct AuroraLink {
    /// e.g. "fpga0:1 -> fpga1:0".
    pub name: String,
    pub params: LinkParams,
    state: Mutex<State>,
    changed: Condvar,
}

/// No word the host could take yet: the always-ready kernel delivered none, or (host as the
/// receiving kernel) the RX FIFO is empty.
fn nothing_for_host(s: &State) -> bool {
    if s.consumer_rate.is_some() {
        s.delivered.is_empty()
    } else {
        s.rx_fifo.is_empty()
    }
}

impl AuroraLink {
    pub fn new(name: impl Into<String>, params: LinkParams) -> AuroraLink {
        AuroraLink {
            name: name.into(),
            params,
            state: Mutex::new(State {
                cycle: 0,
                tx_fifo: VecDeque::new(),
                head_sent: 0,
                wire: VecDeque::new(),
                rx_fifo: VecDeque::new(),
                nfc_wire: VecDeque::new(),
                sender_paused: false,
                xoff_outstanding: false,
                in_flight: 0,
                tx_almost_full: false,
                counters: LinkCounters::default(),
                timing: LinkTiming::default(),
                sender_closed: false,
                consumer_rate: None,
                consumer_credit: 0.0,
                delivered: VecDeque::new(),
                sender_active: false,
                receiver_waiting: false,
                failed: None,
            }),
            changed: Condvar::new(),
        }
    }

    /// Anything that can move without the receiving kernel reading.
    fn can_progress(&self, s: &State) -> bool {
        !s.wire.is_empty()
            || !s.nfc_wire.is_empty()
            || (!s.tx_fifo.is_empty() && !s.sender_paused)
            || (s.consumer_rate.is_some() && !s.rx_fifo.is_empty())
    }

    /// Models the receiving kernel as always ready (AuroraFlow's `recv` benchmark kernel
    /// reads at II=1): it takes `words_per_link_cycle` words per link cycle, e.g.
    /// ap_clk / 402.83 MHz for one word per kernel cycle.
    pub fn set_consumer_rate(&self, words_per_link_cycle: Option<f64>) {
        let mut s = self.state.lock().unwrap();
        s.consumer_rate = words_per_link_cycle;
        s.consumer_credit = 0.0;
    }

    /// Advances one link cycle.
    fn step(&self, s: &mut State) {
        let p = &self.params;
        let now = s.cycle;
        // NFC messages reaching the sender take effect this cycle.
        while let Some(&(at, xoff)) = s.nfc_wire.front() {
            if at > now {
                break;
            }
            s.nfc_wire.pop_front();
            s.sender_paused = xoff;
        }
        // Serialise: 32 B per cycle unless the gearbox or clock compensation takes it.
        if !tx_idle(now) && !s.sender_paused && !s.tx_fifo.is_empty() {
            s.head_sent += 1;
            if s.head_sent == p.beats_per_word() {
                s.head_sent = 0;
                let beat = s.tx_fifo.pop_front().unwrap();
                s.timing.first_send_cycle.get_or_insert(now);
                s.wire.push_back((now + p.latency_cycles(), beat));
            }
        }
        // Arrivals into the RX FIFO.
        while let Some((at, _)) = s.wire.front() {
            if *at > now {
                break;
            }
            let (_, beat) = s.wire.pop_front().unwrap();
            s.timing.first_arrival_cycle.get_or_insert(now);
            s.timing.last_arrival_cycle = Some(now);
            if s.xoff_outstanding {
                s.in_flight += p.beats_per_word();
                s.counters.max_in_flight = s.counters.max_in_flight.max(s.in_flight);
            }
            if s.rx_fifo.len() as u32 >= p.rx_depth {
                s.counters.rx_overflow += 1;
            } else {
                s.rx_fifo.push_back(beat);
            }
        }
        if let Some(rate) = s.consumer_rate {
            s.consumer_credit = (s.consumer_credit + rate).min(1.0);
            if s.consumer_credit >= 1.0 {
                if let Some(b) = s.rx_fifo.pop_front() {
                    s.consumer_credit -= 1.0;
                    s.counters.rx_words += 1;
                    s.delivered.push_back(b);
                }
            }
        }
        self.check_thresholds(s);
        let almost_full = s.tx_fifo.len() as u32 + 1 >= p.tx_depth;
        if almost_full && !s.tx_almost_full {
            s.counters.tx_almost_full_edges += 1;
        }
        s.tx_almost_full = almost_full;
        s.cycle += 1;
        s.timing.cycle = s.cycle;
    }

    fn check_thresholds(&self, s: &mut State) {
        let occupancy = s.rx_fifo.len() as u32;
        let arrive = s.cycle + self.params.latency_cycles();
        if !s.xoff_outstanding && occupancy >= self.params.prog_full {
            s.xoff_outstanding = true;
            s.in_flight = 0;
            s.counters.xoff_sent += 1;
            s.nfc_wire.push_back((arrive, true));
        } else if s.xoff_outstanding && occupancy <= self.params.prog_empty {
            s.xoff_outstanding = false;
            s.counters.xon_sent += 1;
            s.nfc_wire.push_back((arrive, false));
        }
    }

    fn wait<'a>(
        &self,
        s: std::sync::MutexGuard<'a, State>,
        deadline: Instant,
        what: &str,
    ) -> Result<std::sync::MutexGuard<'a, State>> {
        let now = Instant::now();
        if now >= deadline {
            bail!(
                "link {}: {what} made no progress for {:?} (peer stopped?)",
                self.name,
                self.params.stall_timeout
            );
        }
        Ok(self.changed.wait_timeout(s, deadline - now).unwrap().0)
    }

    /// tx_axis: blocks while the TX FIFO is full (backpressure from XOFF reaches here).
    pub fn send(&self, beat: Beat) -> Result<()> {
        let mut deadline = Instant::now() + self.params.stall_timeout;
        let mut s = self.state.lock().unwrap();
        loop {
            if let Some(e) = &s.failed {
                bail!("link {}: {e}", self.name);
            }
            if (s.tx_fifo.len() as u32) < self.params.tx_depth {
                s.tx_fifo.push_back(beat);
                s.counters.tx_words += 1;
                s.sender_active = true;
                self.changed.notify_all();
                return Ok(());
            }
            if self.can_progress(&s) {
                for _ in 0..64 {
                    self.step(&mut s);
                }
                deadline = Instant::now() + self.params.stall_timeout;
                self.changed.notify_all();
            } else {
                s = self.wait(s, deadline, "sender (TX FIFO full, link paused by XOFF)")?;
            }
        }
    }

    /// No more words from the sender: the receiver sees the end once all arrived.
    pub fn close_sender(&self) {
        let mut s = self.state.lock().unwrap();
        s.sender_closed = true;
        s.sender_active = false;
        self.changed.notify_all();
    }

    /// End of a message: the sender goes idle, the link may drain.
    pub fn flush_sender(&self) {
        self.state.lock().unwrap().sender_active = false;
        self.changed.notify_all();
    }

    /// rx_axis: the next word, or None once the sender closed and everything arrived.
    pub fn recv(&self) -> Result<Option<Beat>> {
        let mut deadline = Instant::now() + self.params.stall_timeout;
        let mut s = self.state.lock().unwrap();
        loop {
            if let Some(e) = &s.failed {
                bail!("link {}: {e}", self.name);
            }
            if let Some(b) = s.delivered.pop_front() {
                return Ok(Some(b));
            }
            if s.consumer_rate.is_none() {
                if let Some(b) = s.rx_fifo.pop_front() {
                    s.counters.rx_words += 1;
                    self.check_thresholds(&mut s);
                    self.changed.notify_all();
                    return Ok(Some(b));
                }
            }
            let starved = s.sender_active && s.tx_fifo.is_empty() && !s.sender_paused;
            if self.can_progress(&s) && !starved {
                while nothing_for_host(&s) && self.can_progress(&s) {
                    if s.sender_active && s.tx_fifo.is_empty() && !s.sender_paused {
                        break;
                    }
                    self.step(&mut s);
                }
                deadline = Instant::now() + self.params.stall_timeout;
                self.changed.notify_all();
            } else if s.sender_closed {
                return Ok(None);
            } else {
                s.receiver_waiting = true;
                let r = self.wait(s, deadline, "receiver (RX FIFO empty, nothing in flight)");
                s = match r {
                    Ok(g) => g,
                    Err(e) => {
                        self.state.lock().unwrap().receiver_waiting = false;
                        return Err(e);
                    }
                };
                s.receiver_waiting = false;
            }
        }
    }

    /// Tears the link down: both sides' waits fail with `why`.
    pub fn fail(&self, why: &str) {
        let mut s = self.state.lock().unwrap();
        if s.failed.is_none() {
            s.failed = Some(why.to_string());
        }
        self.changed.notify_all();
    }

    /// A receiver is blocked waiting for words that have not been sent yet.
    pub fn has_waiting_receiver(&self) -> bool {
        self.state.lock().unwrap().receiver_waiting
    }

    pub fn failure(&self) -> Option<String> {
        self.state.lock().unwrap().failed.clone()
    }

    pub fn counters(&self) -> LinkCounters {
        self.state.lock().unwrap().counters
    }

    pub fn timing(&self) -> LinkTiming {
        self.state.lock().unwrap().timing
    }

    pub fn occupancy(&self) -> Occupancy {
        let s = self.state.lock().unwrap();
        Occupancy {
            tx: s.tx_fifo.len() as u32,
            rx: s.rx_fifo.len() as u32,
        }
    }

    pub fn reset_counters(&self) {
        let mut s = self.state.lock().unwrap();
        s.counters = LinkCounters::default();
        s.timing = LinkTiming {
            cycle: s.cycle,
            ..LinkTiming::default()
        };
    }

    /// Starts a new timing window (per benchmark message) without touching the counters.
    pub fn reset_timing(&self) {
        let mut s = self.state.lock().unwrap();
        s.timing = LinkTiming {
            cycle: s.cycle,
            ..LinkTiming::default()
        };
    }

    /// CORE_RESET: FIFOs, channel and NFC state cleared (words in them are dropped, as on
    /// the card); counters survive.
    pub fn reset_core(&self) {
        let mut s = self.state.lock().unwrap();
        s.tx_fifo.clear();
        s.wire.clear();
        s.rx_fifo.clear();
        s.nfc_wire.clear();
        s.head_sent = 0;
        s.sender_paused = false;
        s.xoff_outstanding = false;
        s.in_flight = 0;
        self.changed.notify_all();
    }
}
