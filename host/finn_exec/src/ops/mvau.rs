//! MVAU (matrixvectoractivation.py `execute_node`): `in @ W` over the last axis
//! (MW -> MH), XNOR-popcount for binary/bipolar operands, then multi-thresholding
//! unless `noActivation`.

use anyhow::{bail, Result};

use super::threshold::MultiThreshold;
use super::{check_exact, NodeCtx, Op, F32_EXACT};
use crate::datatype::DataType;
use crate::tensor::{numel, Tensor};

pub struct Mvau {
    name: String,
    mw: usize,
    mh: usize,
    /// Weights transposed to (MH, MW) so each output is one contiguous dot product.
    wt: Vec<i32>,
    /// The same weights as i16 when weights and inputs fit: an i16 x i16 -> i32 dot
    /// product compiles to multiply-add instructions on every x86-64 (pmaddwd).
    wt16: Option<Vec<i16>>,
    /// XNOR-popcount: operands mapped to bipolar, result (dot + MW) / 2.
    xnor: Option<(bool, bool)>,
    act: Option<MultiThreshold>,
    /// |W| transposed, kept when the datatype bound alone cannot show the
    /// accumulator stays exact: then each frame's own bound is checked.
    wt_abs: Option<Vec<i32>>,
    out_shape: Vec<usize>,
}

impl Mvau {
    pub fn new(ctx: &NodeCtx) -> Result<Mvau> {
        let a = ctx.attrs();
        let name = ctx.name().to_string();
        let (mw, mh) = (a.int("MW")? as usize, a.int("MH")? as usize);
        let w = ctx.initializer(1)?;
        if w.shape != [mw, mh] {
            bail!(
                "node {name}: weights of shape {:?}, expected [MW={mw}, MH={mh}]",
                w.shape
            );
        }
        let wv = w.integers(&format!("node {name} weights"))?;
        let idt = a.dtype("inputDataType")?;
        let wdt = a.dtype("weightDataType")?;
        let xnor = if a.int_or("binaryXnorMode", 0)? == 1 {
            Some((false, false))
        } else if idt == DataType::Bipolar && wdt == DataType::Bipolar {
            Some((true, true))
        } else {
            None
        };
        let mut wt = vec![0i32; mw * mh];
        for k in 0..mw {
            for o in 0..mh {
                // Binary weights {0,1} become bipolar {-1,1} for the popcount identity.
                let v = wv[k * mh + o];
                wt[o * mw + k] = match xnor {
                    Some((_, false)) => (2 * v - 1) as i32,
                    _ => v as i32,
                };
            }
        }
        let max_in = match idt.max_abs() {
            Some(m) => m.max(1),
            None => bail!("node {name}: input datatype {idt} is not an integer type"),
        };
        let bound = (0..mh)
            .map(|o| {
                wt[o * mw..(o + 1) * mw]
                    .iter()
                    .map(|&v| v.unsigned_abs() as i64)
                    .sum::<i64>()
                    * max_in
            })
            .max()
            .unwrap_or(0);
        // The datatype bound is the worst case over all inputs; real activations rarely
        // reach it, so a layer above it checks each frame's own bound instead.
        let fits16 = max_in <= i16::MAX as i64 && wt.iter().all(|&v| i16::try_from(v).is_ok());
        let wt16 = fits16.then(|| wt.iter().map(|&v| v as i16).collect());
        let wt_abs = (bound > F32_EXACT).then(|| wt.iter().map(|v| v.abs()).collect());
        let act = MultiThreshold::fused(ctx, mh)?;
        let in_shape = ctx.in_shape(0)?;
        if !numel(&in_shape).is_multiple_of(mw) {
            bail!("node {name}: input shape {in_shape:?} is not a multiple of MW={mw}");
        }
        Ok(Mvau {
            name,
            mw,
            mh,
            wt,
            wt16,
            xnor,
            act,
            wt_abs,
            out_shape: ctx.out_shape()?,
        })
    }
}

#[inline]
fn dot(a: &[i32], b: &[i32]) -> i32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[inline]
fn dot16(a: &[i16], b: &[i16]) -> i32 {
    a.iter().zip(b).map(|(&x, &y)| x as i32 * y as i32).sum()
}

impl Op for Mvau {
    fn run(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let x = inputs[0];
        let rows = x.len() / self.mw;
        if rows * self.mh != numel(&self.out_shape) {
            bail!(
                "node {}: input of {} values does not give output {:?}",
                self.name,
                x.len(),
                self.out_shape
            );
        }
        let mapped;
        let x = match self.xnor {
            Some((false, _)) => {
                mapped = x.data.iter().map(|&v| 2 * v - 1).collect::<Vec<i32>>();
                &mapped[..]
            }
            _ => &x.data[..],
        };
        if let Some(wa) = &self.wt_abs {
            for row in x.chunks_exact(self.mw) {
                let xa: Vec<i64> = row.iter().map(|v| v.unsigned_abs() as i64).collect();
                for o in 0..self.mh {
                    let b: i64 = xa
                        .iter()
                        .zip(&wa[o * self.mw..(o + 1) * self.mw])
                        .map(|(a, w)| a * *w as i64)
                        .sum();
                    check_exact(&self.name, b)?;
                }
            }
        }
        let mut out = vec![0i32; rows * self.mh];
        let mut row16 = vec![0i16; if self.wt16.is_some() { self.mw } else { 0 }];
        for (r, row) in x.chunks_exact(self.mw).enumerate() {
            if self.wt16.is_some() {
                // In range: the input datatype was checked against i16 at load.
                row16.iter_mut().zip(row).for_each(|(d, &v)| *d = v as i16);
            }
            let dst = &mut out[r * self.mh..(r + 1) * self.mh];
            for (o, d) in dst.iter_mut().enumerate() {
                let ws = o * self.mw..(o + 1) * self.mw;
                let mut acc = match &self.wt16 {
                    Some(w16) => dot16(&row16, &w16[ws]),
                    None => dot(row, &self.wt[ws]),
                };
                if self.xnor.is_some() {
                    acc = (acc + self.mw as i32) / 2;
                }
                *d = match &self.act {
                    Some(t) => t.apply(acc as i64, o),
                    None => acc,
                };
            }
        }
        Ok(Tensor::new(self.out_shape.clone(), out))
    }
}
