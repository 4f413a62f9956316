//! The AuroraFlow in-flight budget per cable, from hw/aurora_flow/kernel.toml [flow_control]:
//! after an XOFF the partner's data still in flight must fit above the RX FIFO's prog_full.
//!   (depth - prog_full) * fifo_width / link_beat_bytes >= fixed_inflight_beats + beats_per_metre * cable_m

use std::path::Path;

use anyhow::Result;
use serde::Deserialize;

use crate::diag::Source;
use crate::kernel::Kernel;

#[derive(Clone, Debug, Deserialize)]
pub struct FlowControl {
    pub link_beat_bytes: u64,
    pub fixed_inflight_beats: u64,
    pub beats_per_metre: u64,
}

#[derive(Deserialize)]
struct KernelToml {
    flow_control: Option<FlowControl>,
}

/// `None` when the kernel description has no [flow_control] table (older kernel.toml).
pub fn load(path: &Path) -> Result<Option<FlowControl>> {
    let src = Source::read(path)?;
    let k: KernelToml = toml::from_str(&src.text).map_err(|e| src.toml_error(e))?;
    Ok(k.flow_control)
}

/// Headroom of an AuroraFlow kernel's RX FIFO in link beats, from its kernel.json params.
pub fn headroom_beats(k: &Kernel, fc: &FlowControl) -> Result<u64> {
    let width = k.int_param("fifo_width").ok_or_else(|| {
        anyhow::anyhow!("kernel {} ({}): no fifo_width parameter", k.name, k.origin)
    })? as u64;
    let words = match k.int_param("rx_headroom_words") {
        Some(w) => w as u64,
        None => {
            let size = k.int_param("rx_fifo_size").unwrap_or(0) as u64;
            let full = k.int_param("rx_fifo_prog_full").unwrap_or(0) as u64;
            (size / width.max(1)).saturating_sub(full)
        }
    };
    Ok(words * width / fc.link_beat_bytes.max(1))
}

pub fn need_beats(fc: &FlowControl, cable_m: f64) -> u64 {
    fc.fixed_inflight_beats + (fc.beats_per_metre as f64 * cable_m).ceil() as u64
}
