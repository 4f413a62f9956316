//! LabelSelect (labelselect.py `execute_node`, which runs ONNX TopK in onnxruntime):
//! the indices of the K largest values along the last axis, largest first; equal
//! values keep the lower index first (ONNX TopK's tie rule).

use anyhow::{bail, Result};

use super::{NodeCtx, Op};
use crate::tensor::{numel, Tensor};

pub struct LabelSelect {
    labels: usize,
    k: usize,
    out_shape: Vec<usize>,
}

impl LabelSelect {
    pub fn new(ctx: &NodeCtx) -> Result<LabelSelect> {
        let a = ctx.attrs();
        let name = ctx.name();
        let k = a.int("K")? as usize;
        let in_shape = ctx.in_shape(0)?;
        let labels = *in_shape.last().unwrap_or(&0);
        if k == 0 || k > labels {
            bail!("node {name}: K={k} for {labels} labels");
        }
        let out_shape = ctx.out_shape()?;
        if numel(&out_shape) != numel(&in_shape) / labels * k {
            bail!("node {name}: output {out_shape:?} is not K={k} of input {in_shape:?}");
        }
        Ok(LabelSelect {
            labels,
            k,
            out_shape,
        })
    }
}

impl Op for LabelSelect {
    fn run(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let mut out = Vec::with_capacity(numel(&self.out_shape));
        let mut idx: Vec<usize> = Vec::with_capacity(self.labels);
        for row in inputs[0].data.chunks_exact(self.labels) {
            idx.clear();
            idx.extend(0..self.labels);
            // Stable sort by descending value: ties stay in index order.
            idx.sort_by(|&a, &b| row[b].cmp(&row[a]));
            out.extend(idx[..self.k].iter().map(|&i| i as i32));
        }
        Ok(Tensor::new(self.out_shape.clone(), out))
    }
}
