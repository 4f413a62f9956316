//! Discrete-event simulation of the pipeline, row by row, over several frames.
//!
//! Every stage works on one output row at a time (`row_s` each). It reads input rows from
//! its input FIFO into its own line buffer as soon as they have arrived and it still needs
//! them for the row it is about to produce; a finished row waits in the stage until the
//! FIFO to the next stage has room (blocking, as an AXI4-Stream stage stalls on TREADY). A
//! link's rows take `delay_s` to arrive and hold their FIFO slot meanwhile (the receiver's
//! RX FIFO, credited back when read). The source offers frames back to back, or (`simulate_fed`)
//! each frame once the host has put it into the card's memory.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use crate::pipeline::{Pipeline, StageKind};

#[derive(Debug, Clone, Copy)]
pub struct DesConfig {
    pub frames: u32,
    /// Rows a FIFO between two layers holds.
    pub fifo_rows: u32,
    /// Rows the FIFO behind a link holds (its RX FIFO).
    pub link_fifo_rows: u32,
}

impl Default for DesConfig {
    fn default() -> Self {
        DesConfig {
            frames: 32,
            fifo_rows: 2,
            link_fifo_rows: 2,
        }
    }
}

#[derive(Debug, Clone)]
pub struct DesResult {
    /// Per frame: first input word leaving the source -> last output row of the last stage.
    pub latencies_s: Vec<f64>,
    /// When each frame's last output row left the pipeline.
    pub done_s: Vec<f64>,
    /// Frames per second over the second half of the run (the pipeline is full by then).
    pub fps: f64,
    pub events: u64,
    /// Frame 0's first and last output row, per stage (from the frame's first input word).
    pub frame0_first_s: Vec<f64>,
    pub frame0_last_s: Vec<f64>,
}

#[derive(PartialEq)]
struct Wake(f64, usize);
impl Eq for Wake {}
impl PartialOrd for Wake {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Wake {
    // earliest first; among equal times the later stage first, so that a consumer frees its
    // FIFO slot before the producer looks at it
    fn cmp(&self, o: &Self) -> Ordering {
        o.0.total_cmp(&self.0).then(self.1.cmp(&o.1))
    }
}

#[derive(Default)]
struct StageState {
    /// Output rows handed to the next FIFO (global across frames).
    pushed: u64,
    /// Input rows read from the input FIFO.
    read: u64,
    /// Finish time of the row in work (row index = pushed).
    busy_until: Option<f64>,
    /// The row in work is done and waits for FIFO room.
    done: bool,
    /// Arrival times of the rows in the input FIFO not yet read.
    queue: VecDeque<f64>,
}

pub fn simulate(p: &Pipeline, cfg: &DesConfig) -> DesResult {
    simulate_fed(p, cfg, &[])
}

/// As `simulate`, but frame f's first row leaves the source no earlier than `ready_s[f]`
/// (frames beyond `ready_s` are there from the start): the input DMA reads a frame the host
/// has written over PCIe (`whole.rs`).
pub fn simulate_fed(p: &Pipeline, cfg: &DesConfig, ready_s: &[f64]) -> DesResult {
    let st = &p.stages;
    let n = st.len();
    let frames = cfg.frames.max(1) as u64;
    let cap: Vec<u64> = (0..n)
        .map(|i| match st[i].kind {
            StageKind::Link => cfg.link_fifo_rows.max(1) as u64,
            _ => cfg.fifo_rows.max(1) as u64,
        })
        .collect();
    let mut s: Vec<StageState> = (0..n).map(|_| StageState::default()).collect();
    let mut heap = BinaryHeap::new();
    let mut start = vec![f64::NAN; frames as usize];
    let mut done = vec![f64::NAN; frames as usize];
    let mut events = 0u64;
    let (mut first0, mut last0) = (vec![f64::NAN; n], vec![f64::NAN; n]);
    let total_src = frames * st[0].out_rows as u64;
    heap.push(Wake(0.0, 0));
    while let Some(Wake(t, i)) = heap.pop() {
        events += 1;
        let stage = &st[i];
        let o = stage.out_rows as u64;
        // finish the row in work
        if let Some(b) = s[i].busy_until {
            if b <= t {
                s[i].busy_until = None;
                s[i].done = true;
            }
        }
        // hand it on if the next FIFO (or the sink) has room
        if s[i].done {
            let room = i + 1 == n || s[i].pushed - s[i + 1].read < cap[i];
            if room {
                let k = s[i].pushed;
                if k == 0 {
                    first0[i] = t + stage.delay_s;
                }
                if k + 1 == o {
                    last0[i] = t + stage.delay_s;
                }
                s[i].pushed += 1;
                s[i].done = false;
                if i + 1 == n {
                    if (k + 1).is_multiple_of(o) {
                        done[(k / o) as usize] = t;
                    }
                } else {
                    let at = t + stage.delay_s;
                    s[i + 1].queue.push_back(at);
                    heap.push(Wake(at, i + 1));
                }
            }
        }
        let working = s[i].busy_until.is_some() || s[i].done;
        // The next row to start: a stage reads ahead into its line buffer for the row after
        // the one in work (its input side keeps streaming while it computes).
        let k = s[i].pushed + working as u64;
        if i == 0 {
            if working || k >= total_src {
                continue;
            }
            if k.is_multiple_of(o) {
                match ready_s.get((k / o) as usize) {
                    Some(&r) if r > t => {
                        heap.push(Wake(r, 0));
                        continue;
                    }
                    _ => start[(k / o) as usize] = t,
                }
            }
        } else {
            let frame = k / o;
            if frame >= frames {
                continue;
            }
            let need = frame * stage.in_rows as u64 + stage.need[(k % o) as usize] as u64;
            let mut freed = false;
            while s[i].read < need {
                match s[i].queue.front() {
                    Some(&at) if at <= t => {
                        s[i].queue.pop_front();
                        s[i].read += 1;
                        freed = true;
                    }
                    _ => break,
                }
            }
            if freed {
                heap.push(Wake(t, i - 1));
            }
            if working || s[i].read < need {
                continue; // woken by the next arrival or the end of the row in work
            }
        }
        let b = t + stage.row_s();
        s[i].busy_until = Some(b);
        heap.push(Wake(b, i));
    }
    let latencies_s: Vec<f64> = done.iter().zip(&start).map(|(d, s)| d - s).collect();
    let half = (frames / 2) as usize;
    let fps = if frames >= 2 {
        let from = half.min(frames as usize - 2);
        (frames as usize - 1 - from) as f64 / (done[frames as usize - 1] - done[from])
    } else {
        1.0 / done[0]
    };
    DesResult {
        latencies_s,
        done_s: done,
        fps,
        events,
        frame0_first_s: first0.iter().map(|t| t - start[0]).collect(),
        frame0_last_s: last0.iter().map(|t| t - start[0]).collect(),
    }
}
