//! The closed-form model.
//!
//! Throughput: every stage works on one frame at a time, so the pipeline delivers one frame
//! per `max(frame_s)`.
//!
//! Latency of a frame entering an empty pipeline, per stage and output row k:
//! - fill: the first row is done one row time after the input rows it needs have arrived;
//! - row k is done at the later of (first row + (k−1) row times: the stage streams at its
//!   own rate) and (arrival of the input rows row k needs + one row time: the stage waits
//!   for its input, i.e. streams at the rate of the slowest stage before it);
//! - a row arrives at the next stage when it is done, plus the latency of a link.
//!
//! The last stage's last row is the latency: the sum of every stage's fill, plus the time
//! the rest of the frame takes to stream through the slowest stage, plus the link
//! latencies. It ignores FIFO bounds and stalls: a stage never waits for room downstream,
//! and a stage that waited for input in the middle of a frame is assumed to catch up.

use crate::pipeline::Pipeline;

#[derive(Debug, Clone)]
pub struct StageTimes {
    pub name: String,
    /// From the frame's first input word to this stage's first / last output row.
    pub first_s: f64,
    pub last_s: f64,
    /// first_s minus the previous stage's first_s: how long this stage (and a link's
    /// latency before it) adds before anything comes out.
    pub fill_s: f64,
}

#[derive(Debug, Clone)]
pub struct Analysis {
    pub fps: f64,
    pub bottleneck: String,
    /// From the first input word to the last output row of a frame.
    pub latency_s: f64,
    /// From the first input word to the first output row.
    pub first_output_s: f64,
    pub stages: Vec<StageTimes>,
}

pub fn analyse(p: &Pipeline) -> Analysis {
    let slowest = p
        .stages
        .iter()
        .max_by(|a, b| a.frame_s.total_cmp(&b.frame_s))
        .expect("a pipeline has stages");
    let mut times: Vec<StageTimes> = Vec::with_capacity(p.stages.len());
    // when each input row of the current stage has arrived (the source's are there at 0)
    let mut arrive: Vec<f64> = vec![0.0; p.stages[0].in_rows as usize];
    let mut prev_first = 0.0;
    for s in &p.stages {
        let tau = s.row_s();
        let at = |m: u32| arrive[m as usize - 1];
        let first = at(s.need[0]) + tau;
        let done: Vec<f64> = s
            .need
            .iter()
            .enumerate()
            .map(|(k, &n)| (first + k as f64 * tau).max(at(n) + tau) + s.delay_s)
            .collect();
        let (first, last) = (done[0], *done.last().expect("stages have rows"));
        times.push(StageTimes {
            name: s.name.clone(),
            first_s: first,
            last_s: last,
            fill_s: first - prev_first,
        });
        prev_first = first;
        arrive = done;
    }
    let end = times.last().expect("a pipeline has stages");
    Analysis {
        fps: 1.0 / slowest.frame_s,
        bottleneck: slowest.name.clone(),
        latency_s: end.last_s,
        first_output_s: end.first_s,
        stages: times,
    }
}
