//! FMPadding (fmpadding.py `execute_node`): zero padding of an NHWC tensor by
//! `Padding` = [top, left, bottom, right].

use anyhow::{bail, Result};

use super::{NodeCtx, Op};
use crate::tensor::{numel, Tensor};

pub struct FmPadding {
    in_hw: [usize; 2],
    ch: usize,
    pad: [usize; 4],
    out_shape: Vec<usize>,
}

impl FmPadding {
    pub fn new(ctx: &NodeCtx) -> Result<FmPadding> {
        let name = ctx.name();
        let pad = ctx.attrs().usizes("Padding")?;
        let in_shape = ctx.in_shape(0)?;
        let (Ok(pad), Ok([_, h, w, c])) = (
            <[usize; 4]>::try_from(&pad[..]),
            <[usize; 4]>::try_from(&in_shape[..]),
        ) else {
            bail!("node {name}: FMPadding needs a (1, H, W, C) input and 4 padding values");
        };
        let out_shape = ctx.out_shape()?;
        if numel(&out_shape) != (h + pad[0] + pad[2]) * (w + pad[1] + pad[3]) * c {
            bail!("node {name}: output shape {out_shape:?} is not the padded input {in_shape:?}");
        }
        Ok(FmPadding {
            in_hw: [h, w],
            ch: c,
            pad,
            out_shape,
        })
    }
}

impl Op for FmPadding {
    fn run(&self, inputs: &[&Tensor]) -> Result<Tensor> {
        let x = inputs[0];
        let [h, w] = self.in_hw;
        let ow = w + self.pad[1] + self.pad[3];
        let mut out = Tensor::zeros(&self.out_shape);
        let row = w * self.ch;
        for r in 0..h {
            let dst = ((r + self.pad[0]) * ow + self.pad[1]) * self.ch;
            out.data[dst..dst + row].copy_from_slice(&x.data[r * row..(r + 1) * row]);
        }
        Ok(out)
    }
}
