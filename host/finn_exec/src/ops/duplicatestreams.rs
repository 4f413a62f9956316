//! DuplicateStreams (duplicatestreams.py `execute_node`, finn-plus 1.6.1): the input,
//! reshaped to `numInputVectors + [NumChannels]`, written unchanged to every output. In
//! hardware it is the one reader of a stream that several layers consume (a residual
//! block's input: its first convolution and its shortcut).

use anyhow::{bail, Result};

use super::{NodeCtx, Op};
use crate::tensor::{numel, Tensor};

pub struct DuplicateStreams {
    shape: Vec<usize>,
    copies: usize,
}

impl DuplicateStreams {
    pub fn new(ctx: &NodeCtx) -> Result<DuplicateStreams> {
        let a = ctx.attrs();
        let mut shape = a.usizes("numInputVectors")?;
        shape.push(a.int("NumChannels")? as usize);
        let copies = a.int("NumOutputStreams")? as usize;
        if copies != ctx.node.outputs.len() {
            bail!(
                "node {}: NumOutputStreams is {copies}, the node has {} outputs",
                ctx.name(),
                ctx.node.outputs.len()
            );
        }
        if numel(&shape) != numel(&ctx.in_shape(0)?) {
            bail!(
                "node {}: input {:?} does not hold numInputVectors x NumChannels = {shape:?}",
                ctx.name(),
                ctx.in_shape(0)?
            );
        }
        Ok(DuplicateStreams { shape, copies })
    }
}

impl Op for DuplicateStreams {
    fn run(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        Ok(Tensor::new(self.shape.clone(), inputs[0].data.clone()))
    }

    fn run_outputs(&self, inputs: &[&Tensor]) -> Result<Vec<Tensor>> {
        let t = self.run(inputs)?;
        Ok(vec![t; self.copies])
    }
}
