//! ConvolutionInputGenerator (convolutioninputgenerator.py `execute_node`, which runs
//! qonnx's Im2Col without padding): NHWC input to (1, OH, OW, kh*kw*C) windows in
//! (kh, kw, C) order.

use anyhow::{bail, Result};

use super::{NodeCtx, Op};
use crate::tensor::{numel, Tensor};

pub struct Swg {
    name: String,
    ifm: [usize; 2],
    k: [usize; 2],
    s: [usize; 2],
    d: [usize; 2],
    ch: usize,
    ofm: [usize; 2],
    out_shape: Vec<usize>,
}

fn pair(name: &str, key: &str, v: Vec<usize>) -> Result<[usize; 2]> {
    match v[..] {
        [a, b] => Ok([a, b]),
        _ => bail!("node {name}: {key} {v:?}, expected two values"),
    }
}

/// qonnx `compute_conv_output_dim` without padding.
fn out_dim(ifm: usize, k: usize, s: usize, d: usize) -> usize {
    if ifm + 1 < d * (k - 1) + 1 {
        return 0;
    }
    (ifm - d * (k - 1) - 1) / s + 1
}

impl Swg {
    pub fn new(ctx: &NodeCtx) -> Result<Swg> {
        let a = ctx.attrs();
        let name = ctx.name().to_string();
        let ifm = pair(&name, "IFMDim", a.usizes("IFMDim")?)?;
        let k = pair(&name, "ConvKernelDim", a.usizes("ConvKernelDim")?)?;
        let s = pair(&name, "Stride", a.usizes("Stride")?)?;
        let d = pair(&name, "Dilation", a.usizes("Dilation")?)?;
        let ch = a.int("IFMChannels")? as usize;
        let ofm = [
            out_dim(ifm[0], k[0], s[0], d[0]),
            out_dim(ifm[1], k[1], s[1], d[1]),
        ];
        let out_shape = ctx.out_shape()?;
        if numel(&out_shape) != ofm[0] * ofm[1] * k[0] * k[1] * ch {
            bail!("node {name}: output shape {out_shape:?} does not match {ofm:?} windows of {k:?}x{ch}");
        }
        if numel(&ctx.in_shape(0)?) != ifm[0] * ifm[1] * ch {
            bail!(
                "node {name}: input shape {:?} is not IFMDim {ifm:?} x {ch}",
                ctx.in_shape(0)?
            );
        }
        Ok(Swg {
            name,
            ifm,
            k,
            s,
            d,
            ch,
            ofm,
            out_shape,
        })
    }
}

impl Op for Swg {
    fn run(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let x = inputs[0];
        if x.len() != self.ifm[0] * self.ifm[1] * self.ch {
            bail!("node {}: input of {} values", self.name, x.len());
        }
        let c = self.ch;
        let mut out = Vec::with_capacity(numel(&self.out_shape));
        for oh in 0..self.ofm[0] {
            for ow in 0..self.ofm[1] {
                for kh in 0..self.k[0] {
                    let h = oh * self.s[0] + kh * self.d[0];
                    for kw in 0..self.k[1] {
                        let w = ow * self.s[1] + kw * self.d[1];
                        let base = (h * self.ifm[1] + w) * c;
                        out.extend_from_slice(&x.data[base..base + c]);
                    }
                }
            }
        }
        Ok(Tensor::new(self.out_shape.clone(), out))
    }
}
