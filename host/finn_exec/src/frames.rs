//! Frames of a batch: a `.npy` holding N frames of a port stacks them on axis 0
//! (shape `[N] + shape[1:]`, FINN's batch-1 shapes with the 1 replaced by N).

use anyhow::{bail, Result};

use crate::datatype::DataType;
use crate::partition::Port;
use crate::tensor::{numel, Tensor};

/// Splits `data` (shape `shape`) into frames of `port`.
pub fn split(port: &Port, shape: &[usize], data: Vec<i32>) -> Result<Vec<Tensor>> {
    let per = numel(&port.shape);
    if port.shape.is_empty() {
        bail!("input {}: a scalar port cannot take frames", port.name);
    }
    let fits = shape == port.shape.as_slice()
        || (!shape.is_empty() && shape.len() == port.shape.len() && shape[1..] == port.shape[1..])
        || shape == &port.shape[1..]
        || shape[..] == [data.len()];
    if !fits || per == 0 || !data.len().is_multiple_of(per) {
        bail!(
            "input {}: shape {shape:?} is neither {:?} nor a batch [N, {}]",
            port.name,
            port.shape,
            port.frame_dims()
        );
    }
    Ok(data
        .chunks_exact(per)
        .map(|c| Tensor::new(port.shape.clone(), c.to_vec()))
        .collect())
}

/// The batch shape of `frames` frames of `port`.
pub fn batch_shape(port: &Port, frames: usize) -> Vec<usize> {
    let mut s = port.shape.clone();
    if s.is_empty() {
        s.push(frames);
    } else {
        s[0] *= frames;
    }
    s
}

/// A deterministic generator (xorshift64*), so benchmarks are reproducible without a
/// dependency.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A uniform value of `dtype` (integer types only).
    pub fn value(&mut self, dtype: DataType) -> i32 {
        match dtype {
            DataType::Bipolar => {
                if self.next_u64() & 1 == 0 {
                    -1
                } else {
                    1
                }
            }
            _ => {
                let (lo, hi) = dtype.range().unwrap_or((0, 255));
                (lo + (self.next_u64() % (hi - lo + 1) as u64) as i64) as i32
            }
        }
    }

    pub fn tensor(&mut self, port: &Port) -> Tensor {
        let data = (0..numel(&port.shape))
            .map(|_| self.value(port.dtype))
            .collect();
        Tensor::new(port.shape.clone(), data)
    }
}
