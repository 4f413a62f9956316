//! Pool (pool.py `execute_node`): the last axis holds kh*kw windows of `Channels`;
//! MaxPool takes the max, AccPool the sum, QuantAvgPool the sum shifted right by
//! bit_length((2^ibits - 1) * k2) - obits. AvgPool (a float mean) is only executed
//! when every mean is an integer.

use anyhow::{bail, Result};

use super::{to_i32, NodeCtx, Op};
use crate::tensor::{numel, Tensor};

#[derive(Clone, Copy)]
enum Function {
    Max,
    Acc,
    Avg,
    QuantAvg { shift: u32 },
}

pub struct Pool {
    name: String,
    k2: usize,
    ch: usize,
    f: Function,
    out_shape: Vec<usize>,
}

impl Pool {
    pub fn new(ctx: &NodeCtx) -> Result<Pool> {
        let a = ctx.attrs();
        let name = ctx.name().to_string();
        let k = a.usizes("KernelSize")?;
        let k2: usize = k.iter().product();
        let ch = a.int("Channels")? as usize;
        let f = match a.string("Function")? {
            "MaxPool" => Function::Max,
            "AccPool" => Function::Acc,
            "AvgPool" => Function::Avg,
            "QuantAvgPool" => {
                let (Some(ibits), Some(obits)) = (
                    a.dtype("InputDataType")?.bitwidth(),
                    a.dtype("OutputDataType")?.bitwidth(),
                ) else {
                    bail!("node {name}: QuantAvgPool needs integer datatypes");
                };
                let max_value = ((1i64 << ibits) - 1) * k2 as i64;
                let bit_length = 64 - max_value.leading_zeros();
                Function::QuantAvg {
                    shift: bit_length.saturating_sub(obits),
                }
            }
            other => bail!("node {name}: Pool function {other} is not supported"),
        };
        let in_shape = ctx.in_shape(0)?;
        if in_shape.last() != Some(&(k2 * ch)) {
            bail!("node {name}: input shape {in_shape:?}, last axis must be {k2} x {ch}");
        }
        let out_shape = ctx.out_shape()?;
        if numel(&out_shape) * k2 != numel(&in_shape) {
            bail!("node {name}: output shape {out_shape:?} does not match input {in_shape:?}");
        }
        Ok(Pool {
            name,
            k2,
            ch,
            f,
            out_shape,
        })
    }
}

impl Op for Pool {
    fn run(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let x = inputs[0];
        let mut out = Vec::with_capacity(numel(&self.out_shape));
        for win in x.data.chunks_exact(self.k2 * self.ch) {
            for c in 0..self.ch {
                let vals = (0..self.k2).map(|k| win[k * self.ch + c] as i64);
                let v = match self.f {
                    Function::Max => vals.max().unwrap_or(0),
                    Function::Acc => vals.sum(),
                    Function::QuantAvg { shift } => vals.sum::<i64>() >> shift,
                    Function::Avg => {
                        // numpy's float32 mean: exact integer sum, one rounded division.
                        let mean = vals.sum::<i64>() as f32 / self.k2 as f32;
                        if mean.fract() != 0.0 {
                            bail!(
                                "node {}: AvgPool mean {mean} is not an integer; not supported",
                                self.name
                            );
                        }
                        mean as i64
                    }
                };
                out.push(to_i32(&self.name, v)?);
            }
        }
        Ok(Tensor::new(self.out_shape.clone(), out))
    }
}
