//! VVAU (vectorvectoractivation.py `execute_node`): depthwise `sum_k x[k, c] * W[c, k]`
//! over a sliding-window input, then multi-thresholding unless `noActivation`.
//!
//! FINN reorders the input as if it came interleaved by PE, unless the producer in the
//! same graph is a ConvolutionInputGenerator/Im2Col (then PE = Channels, no reorder).
//! The executor does the same, so a VVAU that starts a partition behaves as in FINN.

use anyhow::{bail, Result};

use super::threshold::MultiThreshold;
use super::{check_exact, NodeCtx, Op};
use crate::datatype::DataType;
use crate::tensor::{numel, Tensor};

pub struct Vvau {
    name: String,
    channels: usize,
    kk: usize,
    /// Weights as (k, c), matching the (k, c) order of the window.
    wt: Vec<i32>,
    /// perm[new] = old index inside one pixel's window, when FINN reorders.
    perm: Option<Vec<usize>>,
    bipolar: bool,
    act: Option<MultiThreshold>,
    out_shape: Vec<usize>,
}

impl Vvau {
    pub fn new(ctx: &NodeCtx) -> Result<Vvau> {
        let a = ctx.attrs();
        let name = ctx.name().to_string();
        let channels = a.int("Channels")? as usize;
        let kernel = a.usizes("Kernel")?;
        if kernel.len() != 2 {
            bail!("node {name}: Kernel {kernel:?}, expected [kh, kw]");
        }
        let kk = kernel[0] * kernel[1];
        let w = ctx.initializer(1)?;
        if w.shape != [channels, 1, kernel[0], kernel[1]] {
            bail!(
                "node {name}: weights of shape {:?}, expected [{channels}, 1, {}, {}]",
                w.shape,
                kernel[0],
                kernel[1]
            );
        }
        let wv = w.integers(&format!("node {name} weights"))?;
        let mut wt = vec![0i32; kk * channels];
        for c in 0..channels {
            for k in 0..kk {
                wt[k * channels + c] = wv[c * kk + k] as i32;
            }
        }
        let from_swg = matches!(
            ctx.producer,
            Some("ConvolutionInputGenerator") | Some("Im2Col")
        );
        let pe = if from_swg {
            channels
        } else {
            a.int("PE")? as usize
        };
        if pe == 0 || !channels.is_multiple_of(pe) {
            bail!("node {name}: PE={pe} does not divide Channels={channels}");
        }
        let perm = (pe != channels).then(|| {
            // FINN: reshape(C/pe, kk, pe) -> transpose to (kk, C/pe, pe).
            let mut p = vec![0; kk * channels];
            for k in 0..kk {
                for cb in 0..channels / pe {
                    for q in 0..pe {
                        p[k * channels + cb * pe + q] = cb * kk * pe + k * pe + q;
                    }
                }
            }
            p
        });
        let idt = a.dtype("inputDataType")?;
        let bipolar = idt == DataType::Bipolar && a.dtype("weightDataType")? == DataType::Bipolar;
        let max_in = match idt.max_abs() {
            Some(m) => m,
            None => bail!("node {name}: input datatype {idt} is not an integer type"),
        };
        let bound = (0..channels)
            .map(|c| {
                (0..kk)
                    .map(|k| wt[k * channels + c].unsigned_abs() as i64)
                    .sum::<i64>()
                    * max_in
            })
            .max()
            .unwrap_or(0);
        check_exact(&name, bound)?;
        let act = MultiThreshold::fused(ctx, channels)?;
        let in_shape = ctx.in_shape(0)?;
        if in_shape.len() != 4 || in_shape[3] != kk * channels {
            bail!(
                "node {name}: input shape {in_shape:?}, expected (1, H, W, {})",
                kk * channels
            );
        }
        Ok(Vvau {
            name,
            channels,
            kk,
            wt,
            perm,
            bipolar,
            act,
            out_shape: ctx.out_shape()?,
        })
    }
}

impl Op for Vvau {
    fn run(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let x = inputs[0];
        let win = self.kk * self.channels;
        let pixels = x.len() / win;
        if pixels * self.channels != numel(&self.out_shape) {
            bail!(
                "node {}: input of {} values does not give output {:?}",
                self.name,
                x.len(),
                self.out_shape
            );
        }
        let c = self.channels;
        let mut out = vec![0i32; pixels * c];
        let mut acc = vec![0i32; c];
        let mut reordered = vec![0i32; if self.perm.is_some() { win } else { 0 }];
        for (p, w_in) in x.data.chunks_exact(win).enumerate() {
            let w_in = match &self.perm {
                Some(perm) => {
                    for (dst, &src) in reordered.iter_mut().zip(perm) {
                        *dst = w_in[src];
                    }
                    &reordered[..]
                }
                None => w_in,
            };
            acc.iter_mut().for_each(|a| *a = 0);
            for k in 0..self.kk {
                let xs = &w_in[k * c..(k + 1) * c];
                let ws = &self.wt[k * c..(k + 1) * c];
                for ((a, &xv), &wv) in acc.iter_mut().zip(xs).zip(ws) {
                    *a += xv * wv;
                }
            }
            let dst = &mut out[p * c..(p + 1) * c];
            for (ch, (d, &v)) in dst.iter_mut().zip(&acc).enumerate() {
                let v = if self.bipolar {
                    (v + self.kk as i32) / 2
                } else {
                    v
                };
                *d = match &self.act {
                    Some(t) => t.apply(v as i64, ch),
                    None => v,
                };
            }
        }
        Ok(Tensor::new(self.out_shape.clone(), out))
    }
}
