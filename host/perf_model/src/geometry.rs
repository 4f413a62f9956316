//! Layer geometry from the executor graphs (finn/flow/export_exec.py): how many rows of a
//! frame each layer reads and writes, and how many input rows each output row needs.
//!
//! A row is one image row of an NHWC tensor (`shape[1]` of a 4-D shape), or the whole
//! tensor for a vector. What a layer needs before an output row follows from its op:
//! - ConvolutionInputGenerator (sliding window): output row r (0-based) needs input rows up
//!   to r·S + (K−1)·D + 1 (`ConvKernelDim`, `Stride`, `Dilation`, `IFMDim`, `OFMDim`);
//! - FMPadding: output row r needs input row r − top (`Padding` = [top, left, bottom,
//!   right]); rows of padding need the row next to them;
//! - every other op (MVAU, VVAU, Thresholding, Pool, ElementwiseAdd, LabelSelect) maps rows
//!   in order: output row r needs ⌈(r+1)·I/O⌉ input rows (all of them when O = 1).
//!
//! A join (ElementwiseAdd of two streams) reads its inputs row by row together, and a fork
//! (DuplicateStreams) writes the same rows to each output: both keep every tensor's rows, so
//! their geometry is their first stream's (the deployment follows one path through them).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Clone)]
pub struct LayerGeometry {
    pub op_type: String,
    pub device: String,
    /// The first streamed input and output.
    pub in_tensor: String,
    pub out_tensor: String,
    /// Every streamed input (two at a join) and every output (several at a fork).
    pub in_tensors: Vec<String>,
    pub out_tensors: Vec<String>,
    pub in_rows: u32,
    pub out_rows: u32,
    pub need: Vec<u32>,
    pub in_bits_per_frame: u64,
    pub out_bits_per_frame: u64,
}

#[derive(Debug, Clone)]
pub struct Geometry {
    pub layers: BTreeMap<String, LayerGeometry>,
    /// The network input: its rows and bits per frame.
    pub input_rows: u32,
    pub input_bits_per_frame: u64,
}

#[derive(Deserialize)]
struct ExecJson {
    partitions: Vec<PartitionEntry>,
    inputs: Vec<String>,
}

#[derive(Deserialize)]
struct PartitionEntry {
    device: String,
    dir: String,
}

#[derive(Deserialize)]
struct Graph {
    #[serde(default)]
    inputs: Vec<String>,
    tensors: BTreeMap<String, TensorInfo>,
    #[serde(default)]
    initializers: BTreeMap<String, Value>,
    nodes: Vec<Node>,
}

#[derive(Deserialize, Clone)]
struct TensorInfo {
    shape: Vec<i64>,
    dtype: String,
}

#[derive(Deserialize)]
struct Node {
    name: String,
    op_type: String,
    inputs: Vec<String>,
    outputs: Vec<String>,
    #[serde(default)]
    attrs: serde_json::Map<String, Value>,
}

/// Bits of one element of a FINN datatype name (UINT4, INT16, BIPOLAR, FLOAT32, ...).
pub fn dtype_bits(dtype: &str) -> Result<u64> {
    match dtype {
        "BIPOLAR" | "BINARY" | "TERNARY" => Ok(if dtype == "TERNARY" { 2 } else { 1 }),
        _ => {
            let digits: String = dtype
                .chars()
                .rev()
                .take_while(|c| c.is_ascii_digit())
                .collect();
            let digits: String = digits.chars().rev().collect();
            digits
                .parse()
                .with_context(|| format!("FINN datatype {dtype:?}: no bit width"))
        }
    }
}

fn rows(shape: &[i64]) -> u32 {
    if shape.len() == 4 {
        shape[1].max(1) as u32
    } else {
        1
    }
}

fn bits(t: &TensorInfo) -> Result<u64> {
    Ok(t.shape.iter().map(|&d| d.max(1) as u64).product::<u64>() * dtype_bits(&t.dtype)?)
}

fn ints(attrs: &serde_json::Map<String, Value>, key: &str) -> Option<Vec<u32>> {
    attrs
        .get(key)?
        .as_array()?
        .iter()
        .map(|v| v.as_u64().map(|x| x as u32))
        .collect()
}

/// Input rows needed before each output row, per the rules in the module comment.
pub fn need_rows(
    op_type: &str,
    attrs: &serde_json::Map<String, Value>,
    in_rows: u32,
    out_rows: u32,
    node: &str,
) -> Result<Vec<u32>> {
    let clamp = |n: i64| n.clamp(1, in_rows as i64) as u32;
    let base = op_type.split('_').next().unwrap_or(op_type);
    let need = match base {
        "ConvolutionInputGenerator" => {
            let k = ints(attrs, "ConvKernelDim")
                .with_context(|| format!("{node}: no ConvKernelDim"))?;
            let s = ints(attrs, "Stride").with_context(|| format!("{node}: no Stride"))?;
            let d = ints(attrs, "Dilation").unwrap_or_else(|| vec![1, 1]);
            if k.is_empty() || s.is_empty() {
                bail!("{node}: empty ConvKernelDim or Stride");
            }
            let (k, s, d) = (
                k[0] as i64,
                s[0] as i64,
                d.first().copied().unwrap_or(1) as i64,
            );
            (0..out_rows as i64)
                .map(|r| clamp(r * s + (k - 1) * d + 1))
                .collect()
        }
        "FMPadding" => {
            let pad = ints(attrs, "Padding").with_context(|| format!("{node}: no Padding"))?;
            let top = *pad.first().unwrap_or(&0) as i64;
            (0..out_rows as i64).map(|r| clamp(r - top + 1)).collect()
        }
        _ => (0..out_rows as u64)
            .map(|r| clamp((((r + 1) * in_rows as u64).div_ceil(out_rows as u64)) as i64))
            .collect(),
    };
    Ok(need)
}

/// Read `exec.json` and every partition's `graph.json` under `exec_dir`.
pub fn load(exec_dir: &Path) -> Result<Geometry> {
    let index = exec_dir.join("exec.json");
    let text = std::fs::read_to_string(&index).with_context(|| {
        format!(
            "{}: cannot read (the [exec] output of a finn_partition)",
            index.display()
        )
    })?;
    let exec: ExecJson = serde_json::from_str(&text)
        .with_context(|| format!("{}: not an executor index", index.display()))?;
    let parts: Vec<(String, std::path::PathBuf)> = exec
        .partitions
        .iter()
        .map(|p| (p.device.clone(), exec_dir.join(&p.dir)))
        .collect();
    load_graphs(&parts, Some(&exec.inputs)).with_context(|| format!("{}", index.display()))
}

/// Read the `graph.json` of each (device, directory), in pipeline order (the directories
/// a sim xclbin's FINN payloads unpack to). The network input is `inputs` or, without them,
/// the first graph's first input.
pub fn load_graphs(
    parts: &[(String, std::path::PathBuf)],
    inputs: Option<&[String]>,
) -> Result<Geometry> {
    let mut layers = BTreeMap::new();
    let mut input = None;
    for (device, dir) in parts {
        let path = dir.join("graph.json");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        let g: Graph = serde_json::from_str(&text)
            .with_context(|| format!("{}: not an executor graph", path.display()))?;
        let tensor = |name: &str| {
            g.tensors
                .get(name)
                .cloned()
                .with_context(|| format!("{}: tensor {name} has no shape", path.display()))
        };
        let wanted: Vec<String> = match inputs {
            Some(i) => i.to_vec(),
            None if input.is_none() => g.inputs.iter().take(1).cloned().collect(),
            None => Vec::new(),
        };
        for want in &wanted {
            if input.is_none() && g.tensors.contains_key(want) {
                let t = tensor(want)?;
                input = Some((rows(&t.shape), bits(&t)?));
            }
        }
        for n in &g.nodes {
            let dynamic: Vec<String> = n
                .inputs
                .iter()
                .filter(|i| !i.is_empty() && !g.initializers.contains_key(*i))
                .cloned()
                .collect();
            let Some(inp) = dynamic.first() else {
                bail!("{}: node {} has no streamed input", path.display(), n.name);
            };
            let out = n
                .outputs
                .first()
                .with_context(|| format!("{}: node {} has no output", path.display(), n.name))?;
            let (ti, to) = (tensor(inp)?, tensor(out)?);
            let (ir, or) = (rows(&ti.shape), rows(&to.shape));
            let need = need_rows(&n.op_type, &n.attrs, ir, or, &n.name)
                .with_context(|| format!("{}", path.display()))?;
            layers.insert(
                n.name.clone(),
                LayerGeometry {
                    op_type: n.op_type.clone(),
                    device: device.clone(),
                    in_tensor: inp.clone(),
                    out_tensor: out.clone(),
                    in_tensors: dynamic.clone(),
                    out_tensors: n.outputs.clone(),
                    in_rows: ir,
                    out_rows: or,
                    need,
                    in_bits_per_frame: bits(&ti)?,
                    out_bits_per_frame: bits(&to)?,
                },
            );
        }
    }
    let (input_rows, input_bits_per_frame) =
        input.context("the network input is in no partition graph")?;
    Ok(Geometry {
        layers,
        input_rows,
        input_bits_per_frame,
    })
}
