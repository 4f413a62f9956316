//! The five FPGA resource kinds the partitioner budgets, in one fixed order.

use serde::{Deserialize, Serialize};

pub const NUM_RES: usize = 5;
/// Names as FINN's estimate reports spell them (FF is ours: FINN has no FF model).
pub const RES_NAMES: [&str; NUM_RES] = ["LUT", "FF", "BRAM_18K", "URAM", "DSP"];

/// A resource vector indexed like [`RES_NAMES`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Res {
    #[serde(rename = "LUT", default)]
    pub lut: f64,
    #[serde(rename = "FF", default)]
    pub ff: f64,
    #[serde(rename = "BRAM_18K", default)]
    pub bram18: f64,
    #[serde(rename = "URAM", default)]
    pub uram: f64,
    #[serde(rename = "DSP", default)]
    pub dsp: f64,
}

impl Res {
    pub fn get(&self, i: usize) -> f64 {
        match i {
            0 => self.lut,
            1 => self.ff,
            2 => self.bram18,
            3 => self.uram,
            _ => self.dsp,
        }
    }

    pub fn set(&mut self, i: usize, v: f64) {
        match i {
            0 => self.lut = v,
            1 => self.ff = v,
            2 => self.bram18 = v,
            3 => self.uram = v,
            _ => self.dsp = v,
        }
    }

    pub fn add(&self, o: &Res) -> Res {
        let mut r = *self;
        for i in 0..NUM_RES {
            r.set(i, self.get(i) + o.get(i));
        }
        r
    }

    /// True when every component is <= the other's.
    pub fn dominated_by_or_eq(&self, o: &Res) -> bool {
        (0..NUM_RES).all(|i| self.get(i) <= o.get(i))
    }
}
