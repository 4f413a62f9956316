//! The AuroraFlow in-flight budget per cable, from hw/aurora_flow/kernel.toml [flow_control]
//! as its one reader (aurora_flow_desc) gives it: after an XOFF the partner's data still in
//! flight must fit above the RX FIFO's prog_full.

use std::path::Path;

use anyhow::Result;

use crate::kernel::Kernel;

pub use aurora_flow_desc::FlowControl;

/// The [flow_control] table of the kernel description at `path`.
pub fn load(path: &Path) -> Result<FlowControl> {
    Ok(aurora_flow_desc::load(path)?.flow_control)
}

/// Headroom of an AuroraFlow kernel's RX FIFO in link beats, from its kernel.json params.
pub fn headroom_beats(k: &Kernel, fc: &FlowControl) -> Result<i64> {
    let width = k.int_param("fifo_width").ok_or_else(|| {
        anyhow::anyhow!("kernel {} ({}): no fifo_width parameter", k.name, k.origin)
    })?;
    let words = match k.int_param("rx_headroom_words") {
        Some(w) => w,
        None => {
            let size = k.int_param("rx_fifo_size").unwrap_or(0);
            let full = k.int_param("rx_fifo_prog_full").unwrap_or(0);
            (size / width.max(1) - full).max(0)
        }
    };
    Ok(fc.headroom_beats(words, width))
}

/// Link beats in flight over `cable_m` metres (a fraction of a metre costs a whole beat).
pub fn need_beats(fc: &FlowControl, cable_m: f64) -> i64 {
    fc.need_beats(cable_m)
}
