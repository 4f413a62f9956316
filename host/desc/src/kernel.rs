//! A kernel's description (`kernel.json`, written by every kernel rule: rules/kernel.bzl
//! `kernel_description`). The deploy tool reads it; its ports go into the device description
//! unchanged.

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The fields of rules/kernel.bzl's `KernelInfo`; the ones the deploy tool does not read
/// (e.g. `kernel_xml`) are kept in `extra`, so a read-back equals the input (absent values
/// as `null`, as `write_json` writes them).
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Kernel {
    pub name: String,
    pub kind: String,
    #[serde(default)]
    pub toolchain: Option<String>,
    #[serde(default)]
    pub control: Option<String>,
    #[serde(default)]
    pub xo: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    pub params: Map<String, Value>,
    pub ports: Vec<Port>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
    /// The file it came from (for errors); empty for kernels described by the deploy tool.
    #[serde(skip)]
    pub origin: String,
}

/// One RTL port of a kernel. Unknown keys (a FINN port's `stream_bits`, `frame_bits`; an
/// HLS port's `bundle`) are kept so a read-back equals the input.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
pub struct Port {
    pub name: String,
    pub kind: String,
    /// "in" or "out"; empty where the kernel gives none (it is then not written).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub dir: String,
    #[serde(default)]
    pub width: u64,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl Kernel {
    pub fn load(path: &Path) -> Result<Kernel> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        let mut k: Kernel = serde_json::from_str(&text).with_context(|| {
            format!("{}: not a kernel description (kernel.json)", path.display())
        })?;
        k.origin = path.display().to_string();
        Ok(k)
    }

    pub fn port(&self, name: &str) -> Option<&Port> {
        self.ports.iter().find(|p| p.name == name)
    }

    /// The only port of `kind` and `dir` (e.g. a DMA's stream), or an error naming the kernel.
    pub fn only(&self, kind: &str, dir: &str) -> Result<&Port> {
        let found: Vec<&Port> = self
            .ports
            .iter()
            .filter(|p| p.kind == kind && p.dir == dir)
            .collect();
        match found.as_slice() {
            [p] => Ok(p),
            _ => anyhow::bail!(
                "kernel {} ({}): expected exactly one {kind} port with dir {dir}, found {}",
                self.name,
                self.origin,
                found.len()
            ),
        }
    }

    /// The only memory-mapped master port (its `dir` varies between kernel descriptions).
    pub fn only_m_axi(&self) -> Result<&Port> {
        let found: Vec<&Port> = self.ports.iter().filter(|p| p.kind == "m_axi").collect();
        match found.as_slice() {
            [p] => Ok(p),
            _ => anyhow::bail!(
                "kernel {} ({}): expected exactly one m_axi port, found {}",
                self.name,
                self.origin,
                found.len()
            ),
        }
    }

    pub fn int_param(&self, key: &str) -> Option<i64> {
        self.params.get(key).and_then(Value::as_i64)
    }

    /// The kernel's name in v++ and XRT: an HLS kernel is its top function (`v++ -c -k
    /// TOP`), whichever target built it (e.g. `dma_out_w16` is kernel `dma_out`).
    pub fn vpp_name(&self) -> &str {
        match self.params.get("top").and_then(Value::as_str) {
            Some(top) if self.kind == "hls" => top,
            _ => &self.name,
        }
    }
}

impl Port {
    /// A port with no extra keys.
    pub fn new(name: &str, kind: &str, dir: &str, width: u64) -> Port {
        Port {
            name: name.into(),
            kind: kind.into(),
            dir: dir.into(),
            width,
            extra: Map::new(),
        }
    }

    /// FINN's unpadded stream width (a FINN partition's port), else TDATA.
    pub fn stream_bits(&self) -> u64 {
        self.extra
            .get("stream_bits")
            .and_then(Value::as_u64)
            .unwrap_or(self.width)
    }

    /// One frame on this port in bytes as the stream carries it (words padded to whole
    /// bytes), for a FINN port whose frame size is known.
    pub fn frame_bytes(&self) -> Option<u64> {
        let frame = self.extra.get("frame_bits").and_then(Value::as_u64)?;
        let words = frame / self.stream_bits().max(1);
        Some(words * padded(self.stream_bits()) / 8)
    }
}

/// AXI4-Stream TDATA is a whole number of bytes; FINN pads its stream interfaces the same way
/// (finn `HWCustomOp.get_instream_width_padded`: rounded up to a multiple of 8).
pub fn padded(bits: u64) -> u64 {
    bits.div_ceil(8) * 8
}
