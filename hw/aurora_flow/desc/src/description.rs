//! Reading `kernel.toml` (its schema is documented in the file itself).

use anyhow::{Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Deserialize)]
pub struct KernelDesc {
    pub kernel: Kernel,
    #[serde(rename = "parameter")]
    pub parameters: Vec<Parameter>,
    pub flow_control: FlowControl,
    #[serde(rename = "register")]
    pub registers: Vec<Register>,
}

#[derive(Debug, Deserialize)]
pub struct Kernel {
    pub name: String,
    pub control: String,
    pub core_status_ok: u32,
}

#[derive(Debug, Deserialize)]
pub struct Parameter {
    pub rtl: String,
    pub attr: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// an integer, or an expression such as "depth/2" (derived parameters)
    pub default: toml::Value,
    pub doc: String,
    pub unit: Option<String>,
    pub allowed: Option<Vec<i64>>,
    pub min: Option<i64>,
    pub max: Option<i64>,
    pub values: Option<BTreeMap<String, i64>>,
}

/// The in-flight budget: (depth - prog_full) * fifo_width / link_beat_bytes must be at least
/// fixed_inflight_beats + beats_per_metre * cable_m.
#[derive(Debug, Deserialize)]
pub struct FlowControl {
    pub link_beat_bytes: i64,
    pub fixed_inflight_beats: i64,
    pub beats_per_metre: i64,
    pub default_cable_m: i64,
}

#[derive(Debug, Deserialize)]
pub struct Register {
    pub offset: u32,
    pub name: String,
    pub access: String,
    pub doc: String,
    /// bit ranges, "hi:lo" or "bit"
    pub fields: Option<BTreeMap<String, String>>,
}

impl Register {
    /// The fields as `[hi:lo] NAME`, lowest bit first.
    pub fn fields_text(&self) -> Option<String> {
        let fields = self.fields.as_ref()?;
        let low = |r: &str| {
            r.rsplit(':')
                .next()
                .and_then(|b| b.parse::<u32>().ok())
                .unwrap_or(0)
        };
        let mut v: Vec<_> = fields.iter().collect();
        v.sort_by_key(|(_, r)| low(r));
        Some(
            v.iter()
                .map(|(n, r)| format!("[{r}] {n}"))
                .collect::<Vec<_>>()
                .join(", "),
        )
    }
}

/// Reads and parses the description, naming the file in any error.
pub fn load(path: &Path) -> Result<KernelDesc> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    toml::from_str(&text)
        .with_context(|| format!("{}: not a valid kernel description", path.display()))
}

impl Parameter {
    /// The default as the README shows it.
    pub fn default_text(&self) -> String {
        match &self.default {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            other => other.to_string(),
        }
    }
}
