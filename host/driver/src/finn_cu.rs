//! The simulated FINN CU: a partition's executor model (host/finn_exec) behind the device
//! runtime's `FinnFactory` / `FinnPartition` seam, with the stream words packed as FINN's
//! stitched IP carries them.
//!
//! Word layout (finn-plus 1.6.1 `finn.util.data_packing.finnpy_to_packed_bytearray` with
//! `reverse_inner=True, reverse_endian=True`, as FINN's drivers pack a folded tensor): a word
//! holds `stream_bits / element bits` consecutive values of the tensor in its flat (NHWC)
//! order, value j in bits `[j*b, (j+1)*b)`, two's complement for signed types, BIPOLAR as
//! 0/1 for -1/+1, the word padded to whole bytes and sent little-endian.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use anyhow::{bail, Context, Result};
use finn_exec::{DataType, Partition};
use fpga_device::sim::finn::{FinnFactory, FinnPartition};
use xclbin::description::Port;
use xclbin::KernelEntry;

/// How one FINN stream packs a tensor into words.
#[derive(Clone, Debug, PartialEq)]
pub struct WordLayout {
    pub dtype: DataType,
    /// Values per word.
    pub per_word: usize,
    /// Bytes per word (TDATA, padded to whole bytes).
    pub word_bytes: usize,
    /// Values per frame.
    pub values: usize,
}

impl WordLayout {
    /// The layout of `port` (a FINN kernel's axis port: `width` padded, `stream_bits` FINN's
    /// own width) carrying frames of `values` values of `dtype`.
    pub fn new(cu: &str, port: &Port, dtype: DataType, values: usize) -> Result<WordLayout> {
        let bits = dtype
            .bitwidth()
            .with_context(|| format!("CU {cu}.{}: {dtype} is not an integer type", port.name))?
            as u64;
        let stream_bits = port.stream_bits();
        if stream_bits == 0 || !stream_bits.is_multiple_of(bits) {
            bail!(
                "CU {cu}.{}: stream of {stream_bits} bits does not hold whole {dtype} values ({bits} bits each); rebuild the link configuration",
                port.name
            );
        }
        let per_word = (stream_bits / bits) as usize;
        if !values.is_multiple_of(per_word) {
            bail!(
                "CU {cu}.{}: a frame of {values} values is not a whole number of {per_word}-value words",
                port.name
            );
        }
        Ok(WordLayout {
            dtype,
            per_word,
            word_bytes: stream_bits.div_ceil(8) as usize,
            values,
        })
    }

    pub fn frame_bytes(&self) -> usize {
        self.values / self.per_word * self.word_bytes
    }

    fn bits(&self) -> u32 {
        self.dtype.bitwidth().unwrap_or(8)
    }

    /// One frame's values as stream bytes.
    pub fn pack(&self, values: &[i64]) -> Vec<u8> {
        let b = self.bits();
        let mask = if b >= 64 { u64::MAX } else { (1u64 << b) - 1 };
        let mut out = vec![0u8; values.len() / self.per_word * self.word_bytes];
        for (w, word) in values.chunks(self.per_word).enumerate() {
            let base = w * self.word_bytes * 8;
            for (j, &v) in word.iter().enumerate() {
                let raw = if self.dtype.is_bipolar() {
                    (v > 0) as u64
                } else {
                    v as u64 & mask
                };
                for k in 0..b as usize {
                    if raw >> k & 1 == 1 {
                        let bit = base + j * b as usize + k;
                        out[bit / 8] |= 1 << (bit % 8);
                    }
                }
            }
        }
        out
    }

    /// One frame's stream bytes as values.
    pub fn unpack(&self, bytes: &[u8]) -> Vec<i64> {
        let b = self.bits() as usize;
        let signed = matches!(
            self.dtype,
            DataType::Int { signed: true, .. } | DataType::Ternary
        );
        let mut out = Vec::with_capacity(self.values);
        for word in bytes
            .chunks(self.word_bytes)
            .take(self.values / self.per_word)
        {
            for j in 0..self.per_word {
                let mut raw = 0u64;
                for k in 0..b {
                    let bit = j * b + k;
                    if word[bit / 8] >> (bit % 8) & 1 == 1 {
                        raw |= 1 << k;
                    }
                }
                out.push(if self.dtype.is_bipolar() {
                    if raw == 1 {
                        1
                    } else {
                        -1
                    }
                } else if signed && b < 64 && raw >> (b - 1) & 1 == 1 {
                    raw as i64 - (1i64 << b)
                } else {
                    raw as i64
                });
            }
        }
        out
    }
}

/// The single input and output axis ports of a FINN CU.
pub fn stream_ports(k: &KernelEntry) -> Result<(&Port, &Port)> {
    let of = |dir: &str| -> Vec<&Port> {
        k.ports
            .iter()
            .filter(|p| p.kind == "axis" && p.dir == dir)
            .collect()
    };
    match (of("in").as_slice(), of("out").as_slice()) {
        ([i], [o]) => Ok((i, o)),
        (i, o) => bail!(
            "FINN CU {}: {} input and {} output streams; the simulated FINN CU runs partitions with one of each",
            k.cu,
            i.len(),
            o.len()
        ),
    }
}

/// What an opened CU tells the host: its output layout and how many frames it finished.
#[derive(Clone)]
pub struct Opened {
    pub output: WordLayout,
    pub frames: Arc<AtomicU64>,
}

struct ExecPartition {
    partition: Partition,
    input: WordLayout,
    output: WordLayout,
    frames: Arc<AtomicU64>,
}

impl FinnPartition for ExecPartition {
    fn input_frame_bytes(&self) -> usize {
        self.input.frame_bytes()
    }

    fn output_frame_bytes(&self) -> usize {
        self.output.frame_bytes()
    }

    fn run(&mut self, input: &[u8]) -> Result<Vec<u8>> {
        let values = self.input.unpack(input);
        let out = self.partition.run_frame(&values)?;
        self.frames.fetch_add(1, Ordering::Relaxed);
        Ok(self.output.pack(&out))
    }
}

/// Opens each FINN CU's payload (the partition's `graph.json` + `tensors/`) with
/// `finn_exec::Partition::load` and remembers what it opened.
#[derive(Default)]
pub struct FinnExecFactory {
    opened: Mutex<BTreeMap<String, Opened>>,
}

impl FinnExecFactory {
    pub fn opened(&self, cu: &str) -> Option<Opened> {
        self.opened.lock().unwrap().get(cu).cloned()
    }
}

impl FinnFactory for FinnExecFactory {
    fn open(&self, kernel: &KernelEntry, payload_dir: &Path) -> Result<Box<dyn FinnPartition>> {
        if !payload_dir.join("graph.json").is_file() {
            bail!(
                "FINN CU {}: its payload ({}) has no graph.json: the xclbin does not carry a partition exported by finn/flow/export_exec.py",
                kernel.cu,
                payload_dir.display()
            );
        }
        let partition = Partition::load(payload_dir)
            .with_context(|| format!("FINN CU {}: loading its partition", kernel.cu))?;
        let (pin, pout) = stream_ports(kernel)?;
        let (gin, gout) = match (partition.inputs(), partition.outputs()) {
            ([i], [o]) => (i.clone(), o.clone()),
            (i, o) => bail!(
                "FINN CU {}: the partition has {} inputs and {} outputs; one of each is supported",
                kernel.cu,
                i.len(),
                o.len()
            ),
        };
        let input = WordLayout::new(&kernel.cu, pin, gin.dtype, partition.frame_in_len())?;
        let output = WordLayout::new(&kernel.cu, pout, gout.dtype, partition.frame_out_len())?;
        let frames = Arc::new(AtomicU64::new(0));
        self.opened.lock().unwrap().insert(
            kernel.cu.clone(),
            Opened {
                output: output.clone(),
                frames: frames.clone(),
            },
        );
        Ok(Box::new(ExecPartition {
            partition,
            input,
            output,
            frames,
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn port(width: u32, stream_bits: u64) -> Port {
        serde_json::from_value(serde_json::json!({
            "name": "s_axis_0", "kind": "axis", "dir": "in", "width": width, "stream_bits": stream_bits
        }))
        .unwrap()
    }

    #[test]
    fn words_pack_low_value_first_little_endian() {
        // 3 x UINT4 in a 12-bit stream, padded to 16 bits: values 1, 2, 3 -> 0x0321.
        let l = WordLayout::new("c", &port(16, 12), DataType::parse("UINT4").unwrap(), 6).unwrap();
        assert_eq!(l.per_word, 3);
        let bytes = l.pack(&[1, 2, 3, 4, 5, 6]);
        assert_eq!(bytes, vec![0x21, 0x03, 0x54, 0x06]);
        assert_eq!(l.unpack(&bytes), vec![1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn signed_and_bipolar_round_trip() {
        let l = WordLayout::new("c", &port(8, 8), DataType::parse("INT4").unwrap(), 4).unwrap();
        assert_eq!(l.pack(&[-1, 7, -8, 0]), vec![0x7f, 0x08]);
        assert_eq!(l.unpack(&[0x7f, 0x08]), vec![-1, 7, -8, 0]);
        let b = WordLayout::new("c", &port(8, 8), DataType::parse("BIPOLAR").unwrap(), 8).unwrap();
        let v = [1, -1, -1, 1, 1, 1, -1, 1];
        assert_eq!(b.pack(&v), vec![0b1011_1001]);
        assert_eq!(b.unpack(&b.pack(&v)), v);
    }

    #[test]
    fn a_stream_that_splits_values_is_refused() {
        let e = WordLayout::new("c", &port(8, 6), DataType::parse("UINT4").unwrap(), 4)
            .unwrap_err()
            .to_string();
        assert!(e.contains("does not hold whole UINT4 values"), "{e}");
    }
}
