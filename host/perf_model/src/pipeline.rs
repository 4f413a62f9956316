//! A chain of stages: the input stream, the layers, the links between devices. Each stage
//! turns `in_rows` input rows of a frame into `out_rows` output rows in `frame_s` seconds of
//! work (evenly spread over its output rows); output row k (1-based) can start once
//! `need[k-1]` input rows of the frame have arrived.

use anyhow::{bail, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StageKind {
    /// The input DMA feeding the first layer, one stream word per clock cycle.
    Source,
    Layer,
    /// An AuroraFlow link: serialisation at the link's bandwidth, then its latency.
    Link,
}

#[derive(Debug, Clone)]
pub struct Stage {
    pub name: String,
    pub kind: StageKind,
    /// Device (layers, source) or "a->b" (links).
    pub device: String,
    pub in_rows: u32,
    pub out_rows: u32,
    /// Work per frame: cycles / clock for layers, bits / bandwidth for links.
    pub frame_s: f64,
    /// Input rows needed before each output row, non-decreasing, each in 1..=in_rows.
    pub need: Vec<u32>,
    /// Time from an output row leaving this stage to it arriving at the next (links).
    pub delay_s: f64,
}

impl Stage {
    /// Time per output row.
    pub fn row_s(&self) -> f64 {
        self.frame_s / self.out_rows as f64
    }
}

#[derive(Debug, Clone)]
pub struct Pipeline {
    pub stages: Vec<Stage>,
}

impl Pipeline {
    pub fn new(stages: Vec<Stage>) -> Result<Pipeline> {
        if stages.is_empty() {
            bail!("a pipeline needs at least one stage");
        }
        for (i, s) in stages.iter().enumerate() {
            if s.out_rows == 0 || s.in_rows == 0 {
                bail!(
                    "stage {}: {} input / {} output rows; both must be > 0",
                    s.name,
                    s.in_rows,
                    s.out_rows
                );
            }
            if s.need.len() != s.out_rows as usize {
                bail!(
                    "stage {}: {} need entries for {} output rows",
                    s.name,
                    s.need.len(),
                    s.out_rows
                );
            }
            if s.need.windows(2).any(|w| w[1] < w[0])
                || s.need.iter().any(|&n| n == 0 || n > s.in_rows)
            {
                bail!(
                    "stage {}: input rows needed must be non-decreasing within 1..={}",
                    s.name,
                    s.in_rows
                );
            }
            if !(s.frame_s > 0.0 && s.frame_s.is_finite()) || s.delay_s < 0.0 {
                bail!(
                    "stage {}: frame time {} s, delay {} s",
                    s.name,
                    s.frame_s,
                    s.delay_s
                );
            }
            if i > 0 && stages[i - 1].out_rows != s.in_rows {
                bail!(
                    "stage {} reads {} rows per frame but {} before it writes {}",
                    s.name,
                    s.in_rows,
                    stages[i - 1].name,
                    stages[i - 1].out_rows
                );
            }
        }
        Ok(Pipeline { stages })
    }
}
