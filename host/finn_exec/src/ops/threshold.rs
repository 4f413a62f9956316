//! Multi-thresholding (qonnx `multithreshold`, as used by Thresholding, MVAU and VVAU):
//! the output is the number of thresholds the input is greater than or equal to,
//! times `out_scale`, plus `out_bias`.

use anyhow::{bail, Result};

use super::NodeCtx;
use crate::graph::Initializer;

pub struct MultiThreshold {
    /// 1 (one set shared by all channels) or the channel count.
    channels: usize,
    steps: usize,
    /// Integer thresholds: for an integer x and a float32 threshold t, `x >= t` is
    /// `x >= ceil(t)`, so comparing integers gives FINN's float32 comparison.
    thresholds: Vec<i64>,
    /// Per channel: thresholds ascending, so a binary search counts them.
    sorted: Vec<bool>,
    out_scale: i32,
    out_bias: i32,
}

impl MultiThreshold {
    pub fn new(
        node: &str,
        init: &Initializer,
        out_scale: i32,
        out_bias: i32,
    ) -> Result<MultiThreshold> {
        if init.shape.len() != 2 {
            bail!(
                "node {node}: thresholds of shape {:?}, expected (channels, steps)",
                init.shape
            );
        }
        let (channels, steps) = (init.shape[0], init.shape[1]);
        let thresholds: Vec<i64> = init
            .values
            .iter()
            .map(|&t| {
                let c = (t as f64).ceil();
                // Beyond any accumulator value: the comparison result is the same.
                c.clamp(-(1i64 << 40) as f64, (1i64 << 40) as f64) as i64
            })
            .collect();
        let sorted = thresholds
            .chunks(steps.max(1))
            .map(|c| c.windows(2).all(|w| w[0] <= w[1]))
            .collect();
        Ok(MultiThreshold {
            channels,
            steps,
            thresholds,
            sorted,
            out_scale,
            out_bias,
        })
    }

    /// The activation an MVAU or VVAU node applies to its `channels` accumulators:
    /// thresholds from its third input, bipolar or offset by `ActVal`; `None` with
    /// `noActivation`.
    pub fn fused(ctx: &NodeCtx, channels: usize) -> Result<Option<MultiThreshold>> {
        let a = ctx.attrs();
        if a.int_or("noActivation", 0)? != 0 {
            return Ok(None);
        }
        let bipolar_out = a.dtype("outputDataType")?.is_bipolar();
        let (scale, bias) = if bipolar_out {
            (2, -1)
        } else {
            (1, a.int("ActVal")? as i32)
        };
        let name = ctx.name();
        let t = MultiThreshold::new(name, ctx.initializer(2)?, scale, bias)?;
        t.check_channels(name, channels)?;
        Ok(Some(t))
    }

    /// Checks that the thresholds fit a tensor with `channels` channels.
    pub fn check_channels(&self, node: &str, channels: usize) -> Result<()> {
        if self.channels != 1 && self.channels != channels {
            bail!(
                "node {node}: {} threshold channels for {channels} channels",
                self.channels
            );
        }
        Ok(())
    }

    #[inline]
    pub fn apply(&self, x: i64, channel: usize) -> i32 {
        let c = if self.channels == 1 { 0 } else { channel };
        let row = &self.thresholds[c * self.steps..(c + 1) * self.steps];
        let count = if self.sorted[c] {
            row.partition_point(|&t| t <= x)
        } else {
            row.iter().filter(|&&t| x >= t).count()
        };
        self.out_scale * count as i32 + self.out_bias
    }
}
