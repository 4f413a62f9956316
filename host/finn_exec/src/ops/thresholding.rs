//! Thresholding (thresholding.py `execute_node`): multi-thresholding over the last
//! (channel) axis plus `ActVal`; a BIPOLAR output maps y to 2y - 1.

use anyhow::{bail, Result};

use super::threshold::MultiThreshold;
use super::{NodeCtx, Op};
use crate::tensor::Tensor;

pub struct Thresholding {
    channels: usize,
    t: MultiThreshold,
    out_shape: Vec<usize>,
}

impl Thresholding {
    pub fn new(ctx: &NodeCtx) -> Result<Thresholding> {
        let a = ctx.attrs();
        let name = ctx.name();
        let in_shape = ctx.in_shape(0)?;
        let channels = *in_shape.last().unwrap_or(&1);
        let bias = a.int("ActVal")? as i32;
        let (scale, bias) = if a.dtype("outputDataType")?.is_bipolar() {
            (2, 2 * bias - 1)
        } else {
            (1, bias)
        };
        let t = MultiThreshold::new(name, ctx.initializer(1)?, scale, bias)?;
        t.check_channels(name, channels)?;
        let out_shape = ctx.out_shape()?;
        if out_shape != in_shape {
            bail!("node {name}: output shape {out_shape:?} differs from input {in_shape:?}");
        }
        Ok(Thresholding {
            channels,
            t,
            out_shape,
        })
    }
}

impl Op for Thresholding {
    fn run(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let x = inputs[0];
        let mut out = vec![0i32; x.len()];
        for (src, dst) in x
            .data
            .chunks_exact(self.channels)
            .zip(out.chunks_exact_mut(self.channels))
        {
            for (c, (d, &v)) in dst.iter_mut().zip(src).enumerate() {
                *d = self.t.apply(v as i64, c);
            }
        }
        Ok(Tensor::new(self.out_shape.clone(), out))
    }
}
