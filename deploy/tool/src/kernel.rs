//! Kernel descriptions (`kernel.json`, written by every kernel rule) and the FINN partition
//! kernel the tool describes itself from the plan.

use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::plan::{CutOnCable, Plan};

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
    /// The file it came from (for errors); empty for kernels described here.
    #[serde(skip)]
    pub origin: String,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct Port {
    pub name: String,
    pub kind: String,
    #[serde(default)]
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

pub(crate) fn port(name: &str, kind: &str, dir: &str, width: u64) -> Port {
    Port {
        name: name.into(),
        kind: kind.into(),
        dir: dir.into(),
        width,
        extra: Map::new(),
    }
}

/// A FINN stream port: TDATA padded to whole bytes, `stream_bits`, FINN's unpadded
/// stream width (elements per cycle x element bits), which tells the simulated partition
/// how many values each word packs, and `frame_bits`, one frame of its tensor (the plan's;
/// absent from older plans), which with the width gives the words per frame.
pub(crate) fn finn_stream(
    name: &str,
    dir: &str,
    bits: u64,
    frame_bits: Option<u64>,
) -> Result<Port> {
    let mut p = port(name, "axis", dir, padded(bits));
    p.extra.insert("stream_bits".into(), Value::from(bits));
    if let Some(frame) = frame_bits.filter(|&f| f > 0) {
        if bits == 0 || !frame.is_multiple_of(bits) {
            anyhow::bail!(
                "FINN port {name}: a frame of {frame} bits is not a whole number of {bits}-bit \
                 stream words; the plan's stream width and frame size disagree (regenerate it)"
            );
        }
        p.extra.insert("frame_bits".into(), Value::from(frame));
    }
    Ok(p)
}

/// The stream interface FINN gives a stitched partition: `s_axis_<i>` in, `m_axis_<j>` out
/// (FINN+ link configs: `sc=<sdp>.m_axis_0:aurora_flow_<n>.tx_axis`).
pub fn finn_partition(
    plan: &Plan,
    device: &str,
    cuts: &[CutOnCable],
    model: Option<String>,
) -> Result<Kernel> {
    let dp = plan
        .device(device)
        .with_context(|| format!("{}: the plan places nothing on device {device}", plan.path))?;
    let (first, last) = match (dp.layers.first(), dp.layers.last()) {
        (Some(f), Some(l)) => (f.clone(), l.clone()),
        _ => anyhow::bail!(
            "{}: device {device} has no layers in the plan; a deployment device without a \
             partition cannot be linked",
            plan.path
        ),
    };
    let layer = |name: &str| plan.layers.iter().find(|l| l.name == name);
    let mut ports = vec![
        port("ap_clk", "clock", "in", 1),
        port("ap_rst_n", "reset", "in", 1),
    ];
    let mut ins = 0;
    if plan.first_device() == Some(device) {
        let l = layer(&plan.layers[0].name).unwrap();
        let w = l.in_stream_bits.with_context(|| {
            format!(
                "{}: layer {} has no in_stream_bits; regenerate the plan with this \
                 project's finn-partition (it records stream widths per layer)",
                plan.path, l.name
            )
        })?;
        ports.push(finn_stream(
            &format!("s_axis_{ins}"),
            "in",
            w,
            l.in_bits_per_frame,
        )?);
        ins += 1;
    }
    for c in cuts.iter().filter(|c| c.cut.to_device == device) {
        ports.push(finn_stream(
            &format!("s_axis_{ins}"),
            "in",
            c.cut.stream_bits,
            Some(c.cut.bits_per_frame),
        )?);
        ins += 1;
    }
    let mut outs = 0;
    for c in cuts.iter().filter(|c| c.cut.from_device == device) {
        ports.push(finn_stream(
            &format!("m_axis_{outs}"),
            "out",
            c.cut.stream_bits,
            Some(c.cut.bits_per_frame),
        )?);
        outs += 1;
    }
    if plan.last_device() == Some(device) {
        let l = plan.layers.last().unwrap();
        let w = l.out_stream_bits.with_context(|| {
            format!(
                "{}: layer {} has no out_stream_bits; regenerate the plan with this \
                 project's finn-partition (it records stream widths per layer)",
                plan.path, l.name
            )
        })?;
        ports.push(finn_stream(
            &format!("m_axis_{outs}"),
            "out",
            w,
            l.out_bits_per_frame,
        )?);
    }
    Ok(finn_kernel(
        format!("finn_{device}"),
        first,
        last,
        dp.layers.len(),
        model,
        ports,
        format!("{} (device {device})", plan.path),
    ))
}

/// A FINN partition's kernel (`ap_ctrl_none`, FINN builds it): its span of layers in `params`,
/// as a device's partition and a replica's segment both describe it.
pub fn finn_kernel(
    name: String,
    first_layer: String,
    last_layer: String,
    layers: usize,
    model: Option<String>,
    ports: Vec<Port>,
    origin: String,
) -> Kernel {
    let mut params = Map::new();
    params.insert("first_layer".into(), Value::String(first_layer));
    params.insert("last_layer".into(), Value::String(last_layer));
    params.insert("layers".into(), Value::from(layers));
    Kernel {
        name,
        kind: "finn".into(),
        toolchain: None,
        control: Some("ap_ctrl_none".into()),
        xo: None,
        model,
        params,
        ports,
        origin,
    }
}
