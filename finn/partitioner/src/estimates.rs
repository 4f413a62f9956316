//! The estimates JSON written by `finn/flow/export_estimates.py`.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use serde_json::Value;

use crate::resources::Res;

#[derive(Clone, Debug, Deserialize)]
pub struct Estimates {
    #[serde(default)]
    pub model: String,
    pub clk_ns: f64,
    pub layers: Vec<Layer>,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Layer {
    pub name: String,
    pub op_type: String,
    #[serde(default)]
    pub preds: Vec<String>,
    #[serde(default)]
    pub attrs: serde_json::Map<String, Value>,
    #[serde(default)]
    pub in_stream_bits: u64,
    #[serde(default)]
    pub out_stream_bits: u64,
    /// One frame's input / output tensor in bits (FINN's normal shape x datatype bits).
    #[serde(default)]
    pub in_bits_per_frame: u64,
    #[serde(default)]
    pub out_bits_per_frame: u64,
    pub cycles: u64,
    pub res: Res,
}

impl Layer {
    pub fn int(&self, key: &str) -> Result<i64> {
        self.attrs
            .get(key)
            .and_then(Value::as_i64)
            .with_context(|| {
                format!(
                    "layer {}: attribute {key} missing or not an integer",
                    self.name
                )
            })
    }

    pub fn ints(&self, key: &str) -> Result<Vec<i64>> {
        let v = self
            .attrs
            .get(key)
            .and_then(Value::as_array)
            .with_context(|| {
                format!("layer {}: attribute {key} missing or not a list", self.name)
            })?;
        v.iter()
            .map(|x| {
                x.as_i64()
                    .with_context(|| format!("layer {}: {key} has a non-integer", self.name))
            })
            .collect()
    }

    pub fn str_attr(&self, key: &str) -> &str {
        self.attrs.get(key).and_then(Value::as_str).unwrap_or("")
    }

    /// Bit width and signedness of a FINN DataType attribute such as "INT4" or "UINT8".
    pub fn dtype(&self, key: &str) -> Result<DType> {
        DType::parse(self.str_attr(key)).with_context(|| {
            format!(
                "layer {}: attribute {key} is not a FINN integer datatype",
                self.name
            )
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DType {
    pub bits: u32,
    pub signed: bool,
}

impl DType {
    pub fn parse(s: &str) -> Option<DType> {
        match s {
            "BIPOLAR" => Some(DType {
                bits: 1,
                signed: true,
            }),
            "BINARY" => Some(DType {
                bits: 1,
                signed: false,
            }),
            "TERNARY" => Some(DType {
                bits: 2,
                signed: true,
            }),
            _ => {
                if let Some(n) = s.strip_prefix("UINT") {
                    n.parse().ok().map(|bits| DType {
                        bits,
                        signed: false,
                    })
                } else if let Some(n) = s.strip_prefix("INT") {
                    n.parse().ok().map(|bits| DType { bits, signed: true })
                } else {
                    None
                }
            }
        }
    }
}

impl Estimates {
    pub fn load(path: &Path) -> Result<Estimates> {
        let text =
            std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
        let est: Estimates = serde_json::from_str(&text)
            .with_context(|| format!("{}: not an estimates JSON", path.display()))?;
        est.validate()
            .with_context(|| format!("{}", path.display()))?;
        Ok(est)
    }

    /// Layers must be unique, topologically ordered, and name only known predecessors.
    pub fn validate(&self) -> Result<()> {
        if self.layers.is_empty() {
            bail!("the graph has no layers");
        }
        if self.clk_ns <= 0.0 {
            bail!("clk_ns must be positive");
        }
        let mut seen: HashMap<&str, usize> = HashMap::new();
        for (i, l) in self.layers.iter().enumerate() {
            for p in &l.preds {
                if !seen.contains_key(p.as_str()) {
                    bail!(
                        "layer {} names predecessor {p}, which is not an earlier layer",
                        l.name
                    );
                }
            }
            if seen.insert(&l.name, i).is_some() {
                bail!("layer name {} appears twice", l.name);
            }
        }
        Ok(())
    }

    pub fn index(&self) -> HashMap<&str, usize> {
        self.layers
            .iter()
            .enumerate()
            .map(|(i, l)| (l.name.as_str(), i))
            .collect()
    }
}
