//! GlobalAccPool (globalaccpool.py `execute_node`): sum over H and W of an NHWC tensor.

use anyhow::{bail, Result};

use super::{to_i32, NodeCtx, Op};
use crate::tensor::{numel, Tensor};

pub struct GlobalAccPool {
    name: String,
    ch: usize,
    out_shape: Vec<usize>,
}

impl GlobalAccPool {
    pub fn new(ctx: &NodeCtx) -> Result<GlobalAccPool> {
        let in_shape = ctx.in_shape(0)?;
        let ch = *in_shape.last().unwrap_or(&1);
        let out_shape = ctx.out_shape()?;
        if in_shape.len() != 4 || numel(&out_shape) != ch {
            bail!(
                "node {}: input {in_shape:?} / output {out_shape:?}, expected (1,H,W,C) -> C",
                ctx.name()
            );
        }
        Ok(GlobalAccPool {
            name: ctx.name().to_string(),
            ch,
            out_shape,
        })
    }
}

impl Op for GlobalAccPool {
    fn run(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let mut acc = vec![0i64; self.ch];
        for px in inputs[0].data.chunks_exact(self.ch) {
            for (a, &v) in acc.iter_mut().zip(px) {
                *a += v as i64;
            }
        }
        let data = acc
            .into_iter()
            .map(|v| to_i32(&self.name, v))
            .collect::<Result<_>>()?;
        Ok(Tensor::new(self.out_shape.clone(), data))
    }
}
