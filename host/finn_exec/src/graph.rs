//! The exported graph format (`graph.json` + `tensors/*.f32`, written by
//! finn/flow/export_exec.py), read into plain structures.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use serde::Deserialize;
use serde_json::Value;

use crate::datatype::DataType;

pub const FORMAT: &str = "auroraforge-finn-exec/1";

#[derive(Debug, Deserialize)]
pub struct TensorInfo {
    pub shape: Vec<usize>,
    pub dtype: String,
}

#[derive(Debug, Deserialize)]
pub struct InitializerInfo {
    pub shape: Vec<usize>,
    pub file: String,
    pub dtype: String,
}

#[derive(Debug, Deserialize)]
pub struct NodeSpec {
    pub name: String,
    pub op_type: String,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    #[serde(default)]
    pub attrs: serde_json::Map<String, Value>,
}

#[derive(Debug, Deserialize)]
pub struct GraphFile {
    pub format: String,
    #[serde(default)]
    pub name: String,
    pub inputs: Vec<String>,
    pub outputs: Vec<String>,
    pub tensors: BTreeMap<String, TensorInfo>,
    pub initializers: BTreeMap<String, InitializerInfo>,
    pub nodes: Vec<NodeSpec>,
}

/// An initializer as FINN holds it: float32 values with their shape.
#[derive(Debug, Clone)]
pub struct Initializer {
    pub shape: Vec<usize>,
    pub values: Vec<f32>,
    pub dtype: DataType,
}

impl Initializer {
    /// The values as integers; FINN's HW layers only hold integer parameters.
    pub fn integers(&self, what: &str) -> Result<Vec<i64>> {
        self.values
            .iter()
            .map(|&v| {
                if v.fract() == 0.0 && v.abs() < 9.0e15 {
                    Ok(v as i64)
                } else {
                    Err(anyhow!(
                        "{what}: non-integer value {v}; only integer parameters are supported"
                    ))
                }
            })
            .collect()
    }
}

/// A loaded graph: the JSON plus its initializers.
pub struct Graph {
    pub file: GraphFile,
    pub dir: PathBuf,
    pub initializers: BTreeMap<String, Initializer>,
}

impl Graph {
    pub fn load(dir: &Path) -> Result<Graph> {
        let path = dir.join("graph.json");
        let text = fs::read_to_string(&path).with_context(|| {
            format!(
                "{}: cannot read (export the partition with finn/flow/export_exec.py)",
                path.display()
            )
        })?;
        let file: GraphFile = serde_json::from_str(&text)
            .with_context(|| format!("{}: not an executor graph", path.display()))?;
        if file.format != FORMAT {
            bail!(
                "{}: format {:?}, this executor reads {FORMAT:?}",
                path.display(),
                file.format
            );
        }
        let mut initializers = BTreeMap::new();
        for (name, info) in &file.initializers {
            let p = dir.join(&info.file);
            let bytes = fs::read(&p)
                .with_context(|| format!("{}: cannot read initializer {name}", p.display()))?;
            let n: usize = info.shape.iter().product();
            if bytes.len() != 4 * n {
                bail!(
                    "{}: {} bytes, initializer {name} of shape {:?} needs {}",
                    p.display(),
                    bytes.len(),
                    info.shape,
                    4 * n
                );
            }
            let values = bytes
                .chunks_exact(4)
                .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                .collect();
            let dtype = DataType::parse(&info.dtype)
                .with_context(|| format!("{}: initializer {name}", path.display()))?;
            initializers.insert(
                name.clone(),
                Initializer {
                    shape: info.shape.clone(),
                    values,
                    dtype,
                },
            );
        }
        Ok(Graph {
            file,
            dir: dir.to_path_buf(),
            initializers,
        })
    }

    pub fn tensor(&self, name: &str) -> Result<&TensorInfo> {
        self.file.tensors.get(name).ok_or_else(|| {
            anyhow!(
                "{}: tensor {name} has no shape in graph.json",
                self.dir.display()
            )
        })
    }

    pub fn dtype(&self, name: &str) -> Result<DataType> {
        DataType::parse(&self.tensor(name)?.dtype)
    }
}

/// Typed access to a node's attributes (all of them are exported, defaults included).
pub struct Attrs<'a> {
    pub node: &'a NodeSpec,
}

impl Attrs<'_> {
    fn get(&self, key: &str) -> Result<&Value> {
        self.node.attrs.get(key).ok_or_else(|| {
            anyhow!(
                "node {} ({}): attribute {key} missing",
                self.node.name,
                self.node.op_type
            )
        })
    }

    pub fn int(&self, key: &str) -> Result<i64> {
        self.get(key)?
            .as_i64()
            .ok_or_else(|| anyhow!("node {}: attribute {key} is not an integer", self.node.name))
    }

    pub fn int_or(&self, key: &str, default: i64) -> Result<i64> {
        if self.node.attrs.contains_key(key) {
            self.int(key)
        } else {
            Ok(default)
        }
    }

    pub fn ints(&self, key: &str) -> Result<Vec<i64>> {
        let v = self.get(key)?;
        let list = v
            .as_array()
            .ok_or_else(|| anyhow!("node {}: attribute {key} is not a list", self.node.name))?;
        list.iter()
            .map(|x| {
                x.as_i64().ok_or_else(|| {
                    anyhow!(
                        "node {}: attribute {key} holds a non-integer",
                        self.node.name
                    )
                })
            })
            .collect()
    }

    pub fn usizes(&self, key: &str) -> Result<Vec<usize>> {
        self.ints(key)?
            .into_iter()
            .map(|x| {
                usize::try_from(x)
                    .map_err(|_| anyhow!("node {}: attribute {key} is negative", self.node.name))
            })
            .collect()
    }

    pub fn string(&self, key: &str) -> Result<&str> {
        self.get(key)?
            .as_str()
            .ok_or_else(|| anyhow!("node {}: attribute {key} is not a string", self.node.name))
    }

    pub fn dtype(&self, key: &str) -> Result<DataType> {
        DataType::parse(self.string(key)?)
            .with_context(|| format!("node {}: attribute {key}", self.node.name))
    }
}
