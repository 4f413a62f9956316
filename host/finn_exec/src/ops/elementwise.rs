//! ElementwiseAdd/Sub/Mul/Max (elementwise_binary.py `execute_node`): numpy's
//! operation with broadcasting on int64 operands (integer datatypes), either input
//! a tensor or a constant initializer.

use anyhow::{bail, Result};

use super::{to_i32, Built, NodeCtx, Op};
use crate::tensor::{numel, Tensor};

#[derive(Clone, Copy)]
enum Kind {
    Add,
    Sub,
    Mul,
    Max,
}

enum Operand {
    /// Index into the op's dynamic inputs.
    Input(usize),
    Const(Vec<i64>),
}

pub struct Elementwise {
    name: String,
    kind: Kind,
    lhs: Operand,
    rhs: Operand,
    /// Per operand, the stride of each output axis (0 where broadcast).
    strides: [Vec<usize>; 2],
    /// The broadcast shape (`out_shape` attribute) the strides walk.
    bshape: Vec<usize>,
    out_shape: Vec<usize>,
}

/// numpy broadcasting: strides of `shape` seen through `out` (right-aligned).
fn broadcast_strides(name: &str, shape: &[usize], out: &[usize]) -> Result<Vec<usize>> {
    if shape.len() > out.len() {
        bail!("node {name}: operand shape {shape:?} has more axes than the output {out:?}");
    }
    let mut strides = vec![0; out.len()];
    let mut stride = 1;
    for i in (0..shape.len()).rev() {
        let o = out.len() - shape.len() + i;
        if shape[i] == out[o] {
            strides[o] = stride;
        } else if shape[i] != 1 {
            bail!("node {name}: operand shape {shape:?} does not broadcast to {out:?}");
        }
        stride *= shape[i];
    }
    Ok(strides)
}

pub fn build(ctx: &NodeCtx) -> Result<Built> {
    let a = ctx.attrs();
    let name = ctx.name().to_string();
    let kind = match ctx.node.op_type.as_str() {
        "ElementwiseAdd" => Kind::Add,
        "ElementwiseSub" => Kind::Sub,
        "ElementwiseMul" => Kind::Mul,
        "ElementwiseMax" => Kind::Max,
        other => bail!("node {name}: {other} is not supported (ElementwiseAdd/Sub/Mul/Max are)"),
    };
    for key in ["lhs_dtype", "rhs_dtype"] {
        if !a.dtype(key)?.is_integer() {
            bail!("node {name}: {key} is not an integer datatype; float elementwise ops are not supported");
        }
    }
    let out_shape = a.usizes("out_shape")?;
    if numel(&out_shape) != numel(&ctx.out_shape()?) {
        bail!(
            "node {name}: out_shape {out_shape:?} disagrees with the output tensor {:?}",
            ctx.out_shape()?
        );
    }
    let mut inputs = Vec::new();
    let mut operand = |i: usize, key: &str| -> Result<(Operand, Vec<usize>)> {
        let shape = a.usizes(key)?;
        let (op, n) = if ctx.is_initializer(i) {
            let init = ctx.initializer(i)?;
            let v = init.integers(&format!("node {name} input {i}"))?;
            let n = v.len();
            (Operand::Const(v), n)
        } else {
            inputs.push(ctx.input(i)?.to_string());
            (Operand::Input(inputs.len() - 1), numel(&ctx.in_shape(i)?))
        };
        if n != numel(&shape) {
            bail!("node {name}: input {i} holds {n} values, {key} is {shape:?}");
        }
        Ok((op, broadcast_strides(&name, &shape, &out_shape)?))
    };
    let (lhs, ls) = operand(0, "lhs_shape")?;
    let (rhs, rs) = operand(1, "rhs_shape")?;
    let op = Elementwise {
        name,
        kind,
        lhs,
        rhs,
        strides: [ls, rs],
        bshape: out_shape,
        out_shape: ctx.out_shape()?,
    };
    Ok(Built {
        op: Box::new(op),
        inputs,
    })
}

impl Op for Elementwise {
    fn run(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let get = |o: &Operand, idx: usize| -> i64 {
            match o {
                Operand::Input(i) => inputs[*i].data[idx] as i64,
                Operand::Const(v) => v[idx],
            }
        };
        let n = numel(&self.out_shape);
        let out_axes = self.bshape.len();
        let mut pos = vec![0usize; out_axes];
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let li: usize = pos.iter().zip(&self.strides[0]).map(|(p, s)| p * s).sum();
            let ri: usize = pos.iter().zip(&self.strides[1]).map(|(p, s)| p * s).sum();
            let (l, r) = (get(&self.lhs, li), get(&self.rhs, ri));
            let v = match self.kind {
                Kind::Add => l + r,
                Kind::Sub => l - r,
                Kind::Mul => l * r,
                Kind::Max => l.max(r),
            };
            out.push(to_i32(&self.name, v)?);
            for ax in (0..out_axes).rev() {
                pos[ax] += 1;
                if pos[ax] < self.bshape[ax] {
                    break;
                }
                pos[ax] = 0;
            }
        }
        Ok(Tensor::new(self.out_shape.clone(), out))
    }
}
