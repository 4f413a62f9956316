//! StreamingDataWidthConverter and StreamingFIFO: in FINN's Python execution the
//! values pass unchanged (only the stream width/buffering differ in hardware).

use anyhow::{bail, Result};

use super::{NodeCtx, Op};
use crate::tensor::{numel, Tensor};

pub struct Passthrough {
    out_shape: Vec<usize>,
}

impl Passthrough {
    pub fn new(ctx: &NodeCtx) -> Result<Passthrough> {
        let out_shape = ctx.out_shape()?;
        if numel(&out_shape) != numel(&ctx.in_shape(0)?) {
            bail!(
                "node {}: output {out_shape:?} holds a different number of values than the input",
                ctx.name()
            );
        }
        Ok(Passthrough { out_shape })
    }
}

impl Op for Passthrough {
    fn run(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        Ok(Tensor::new(self.out_shape.clone(), inputs[0].data.clone()))
    }
}
