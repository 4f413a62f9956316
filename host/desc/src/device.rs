//! The simulated device description (`auroraforge-sim-device/1`, `<dev>.sim.json`), written
//! by the deploy tool (deploy/tool/src/linkcfg.rs) and carried in the xclbin's USER_METADATA.
//! Unknown fields are kept so a read-back equals the input. Every field is written, absent
//! values as `null` (what the writer has always written, so its outputs stay byte-identical).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use crate::kernel::Port;

pub const FORMAT: &str = "auroraforge-sim-device/1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceDescription {
    pub format: String,
    pub deployment: String,
    pub device: String,
    #[serde(default)]
    pub node: u32,
    #[serde(default)]
    pub card: u32,
    pub platform: String,
    pub clock_mhz: f64,
    #[serde(default)]
    pub kernels: Vec<KernelEntry>,
    #[serde(default)]
    pub streams: Vec<StreamEntry>,
    #[serde(default)]
    pub memory: Vec<MemoryEntry>,
    #[serde(default)]
    pub links: Vec<LinkEntry>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelEntry {
    pub cu: String,
    pub kernel: String,
    pub kind: String,
    #[serde(default)]
    pub slr: Option<String>,
    #[serde(default)]
    pub control: Option<String>,
    #[serde(default)]
    pub params: Map<String, Value>,
    /// The kernel.json's ports as they are.
    #[serde(default)]
    pub ports: Vec<Port>,
    #[serde(default)]
    pub model: Option<String>,
    /// The build's kernel (its kernel.json `name`; `kernel` is the name in v++ and XRT).
    #[serde(default)]
    pub payload: Option<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// One argument of a kernel's C/C++ signature, in the order XRT numbers them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgEntry {
    pub index: u32,
    pub name: String,
    /// "memory", "stream" or "scalar".
    pub kind: String,
    /// The RTL port the argument is reached through (m_axi bundle, axis, s_axi_control).
    pub port: String,
    /// Bytes of a scalar or pointer in the register map (0 for streams).
    pub size: u32,
    /// Register-map offset (0 for streams).
    pub offset: u64,
}

impl KernelEntry {
    /// The kernel's arguments: `params.args` (an HLS kernel's signature, as its rule
    /// records it), else one per data port in port order (m_axi as a pointer, axis as a
    /// stream, other non-control ports as 4-byte scalars), numbered from 0.
    pub fn args(&self) -> Vec<ArgEntry> {
        if let Some(list) = self.params.get("args").and_then(|a| a.as_array()) {
            let mut v: Vec<ArgEntry> = list
                .iter()
                .enumerate()
                .map(|(i, a)| {
                    let s = |k: &str| a.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
                    let n = |k: &str| a.get(k).and_then(|v| v.as_u64());
                    ArgEntry {
                        index: n("index").unwrap_or(i as u64) as u32,
                        name: s("name"),
                        kind: s("kind"),
                        port: s("port"),
                        size: n("size").unwrap_or(0) as u32,
                        offset: n("offset").unwrap_or(0),
                    }
                })
                .collect();
            v.sort_by_key(|a| a.index);
            return v;
        }
        // XRT's parser wants the indices consecutive from 0.
        self.ports
            .iter()
            .filter(|p| !matches!(p.kind.as_str(), "clock" | "reset" | "axilite"))
            .enumerate()
            .map(|(i, p)| {
                let kind = match p.kind.as_str() {
                    "m_axi" => "memory",
                    "axis" => "stream",
                    _ => "scalar",
                };
                ArgEntry {
                    index: i as u32,
                    name: p.name.clone(),
                    kind: kind.into(),
                    port: p.name.clone(),
                    size: match kind {
                        "memory" => 8,
                        "scalar" => 4,
                        _ => 0,
                    },
                    offset: 0x10 + 8 * i as u64,
                }
            })
            .collect()
    }

    /// XRT's `IP_CONTROL` of this CU: explicit `control`, else by kind (RTL link kernels and
    /// FINN partitions are free-running, HLS kernels are started by the host).
    pub fn control(&self) -> &str {
        match self.control.as_deref() {
            Some(c) => c,
            None if self.kind == "hls" => "ap_ctrl_hs",
            None => "ap_ctrl_none",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StreamEntry {
    pub from: String,
    pub to: String,
    #[serde(default)]
    pub width: u32,
    #[serde(default)]
    pub depth: u32,
    /// The width converter v++ puts on a stream joining ports of different widths.
    #[serde(default)]
    pub converter: Option<Converter>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Converter {
    /// Bits of the producer's port.
    pub from_width: u64,
    /// Bits of the consumer's port.
    pub to_width: u64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MemoryEntry {
    pub cu: String,
    pub port: String,
    pub bank: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkEntry {
    pub cu: String,
    pub port: u32,
    pub peer_device: String,
    pub peer_port: u32,
    #[serde(default)]
    pub cable_m: f64,
    /// The partition cut the link carries (its TX cut, else its RX cut).
    #[serde(default)]
    pub cut: Option<LinkCut>,
    /// The cut this end sends, if any.
    #[serde(default)]
    pub tx_cut: Option<LinkCut>,
    /// The cut this end receives, if any.
    #[serde(default)]
    pub rx_cut: Option<LinkCut>,
    /// This device sends nothing on the cable (its tx_axis stays open).
    #[serde(default)]
    pub idle_tx: bool,
    /// This device reads nothing from the cable.
    #[serde(default)]
    pub idle_rx: bool,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// A FINN partition cut on a cable: the layers either side and the stream's width.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkCut {
    pub from_layer: String,
    pub to_layer: String,
    pub stream_bits: u64,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl DeviceDescription {
    /// Parses and checks the description; `origin` names the file in errors.
    pub fn parse(origin: &str, text: &str) -> anyhow::Result<DeviceDescription> {
        let d: DeviceDescription = serde_json::from_str(text)
            .map_err(|e| anyhow::anyhow!("{origin}: not a sim device description: {e}"))?;
        if d.format != FORMAT {
            anyhow::bail!("{origin}: format is '{}', expected '{FORMAT}'", d.format);
        }
        let mut seen = std::collections::BTreeSet::new();
        for k in &d.kernels {
            if !seen.insert(k.cu.as_str()) {
                anyhow::bail!("{origin}: device {}: CU '{}' listed twice", d.device, k.cu);
            }
        }
        for m in &d.memory {
            if !seen.contains(m.cu.as_str()) {
                anyhow::bail!(
                    "{origin}: device {}: memory entry names CU '{}' which is not in kernels",
                    d.device,
                    m.cu
                );
            }
        }
        Ok(d)
    }

    pub fn kernel(&self, cu: &str) -> Option<&KernelEntry> {
        self.kernels.iter().find(|k| k.cu == cu)
    }
}
