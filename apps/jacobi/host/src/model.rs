//! The modelled time of one iteration on the cards, beside the link's limit.
//!
//! The kernel (apps/jacobi/jacobi.cpp) first exchanges the halo rows (loop `send_rows`, then
//! `receive_halos`), then sweeps the slab (`sweep_words`, once per row), one 512-bit word
//! per loop trip; the initiation intervals are the ones its PIPELINE pragmas ask for (read
//! from the source here; no HLS synthesis has confirmed them). Both halo rows of every card
//! cross their cables at once, one per cable direction, so the exchange takes at least the
//! link's latency plus one row at the link's payload rate (host/perf_model's link model:
//! AuroraFlow's parameters as the loaded xclbin's description gives them, the cable's
//! length). Per iteration: exchange (the longer of its loops and the link) + sweep.

use anyhow::{bail, Context, Result};
use fpga_device::sim::link::LinkParams;
use perf_model::link::LinkModel;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::layout::Layout;

const KERNEL: &str = include_str!("../../jacobi.cpp");

/// The II the kernel's `#pragma HLS PIPELINE II = N` asks of the loop labelled `label`.
pub fn initiation_interval(label: &str) -> Result<u64> {
    let mut current = None;
    for line in KERNEL.lines().map(str::trim) {
        if let Some(l) = line.strip_suffix(':') {
            if l.chars().all(|c| c.is_alphanumeric() || c == '_') {
                current = Some(l);
            }
        }
        if let Some(ii) = line.strip_prefix("#pragma HLS PIPELINE II =") {
            if current == Some(label) {
                return ii
                    .trim()
                    .parse()
                    .with_context(|| format!("apps/jacobi/jacobi.cpp: loop {label}: II {ii}"));
            }
        }
    }
    bail!("apps/jacobi/jacobi.cpp has no pipelined loop labelled {label}")
}

#[derive(Debug, Clone, Serialize)]
pub struct IterationModel {
    pub clock_mhz: f64,
    /// 512-bit words per row.
    pub words: u64,
    pub row_bytes: u64,
    pub send_cycles: u64,
    pub receive_cycles: u64,
    pub sweep_cycles: u64,
    pub sweep_s: f64,
    /// A halo row over its cable: latency + row at the payload rate.
    pub link_s: f64,
    pub link_latency_s: f64,
    /// The link's limit: its payload rate.
    pub link_bits_per_s: f64,
    pub exchange_s: f64,
    pub iteration_s: f64,
    /// "link" when a halo row's way over its cable takes longer than each of the kernel's
    /// phases (the exchange loops, the sweep), else "compute".
    pub bound: String,
}

/// The model of one iteration of a `rows` x `cols` slab; `link` the AuroraFlow CU's params
/// (its kernel description) and `cable_m` the cable's length.
pub fn iteration(
    layout: &Layout,
    rows: u32,
    cols: u32,
    clock_mhz: f64,
    link: &Map<String, Value>,
    cable_m: f64,
) -> Result<IterationModel> {
    let words = (cols / layout.cells_per_word()) as u64;
    let row_bytes = layout.row_bytes(cols);
    let send_cycles = words * initiation_interval("send_rows")?;
    let receive_cycles = words * initiation_interval("receive_halos")?;
    let sweep_cycles = rows as u64 * words * initiation_interval("sweep_words")?;
    let hz = clock_mhz * 1e6;
    let l = LinkModel::new(link, cable_m, clock_mhz)?;
    let link_s = l.latency_s + row_bytes as f64 * 8.0 / l.bits_per_s;
    let loops_s = (send_cycles + receive_cycles) as f64 / hz;
    let exchange_s = loops_s.max(link_s);
    let sweep_s = sweep_cycles as f64 / hz;
    Ok(IterationModel {
        clock_mhz,
        words,
        row_bytes,
        send_cycles,
        receive_cycles,
        sweep_cycles,
        sweep_s,
        link_s,
        link_latency_s: l.latency_s,
        link_bits_per_s: l.bits_per_s,
        exchange_s,
        iteration_s: exchange_s + sweep_s,
        bound: if link_s > loops_s.max(sweep_s) {
            "link"
        } else {
            "compute"
        }
        .into(),
    })
}

/// What one direction of a link holds before its sender must stop: the sender's TX FIFO
/// and the receiver's RX FIFO up to XOFF (both cards run the same link kernel). The
/// kernel sends a whole row before it reads (see jacobi.cpp), so a row must fit.
pub fn link_buffer_bytes(link: &Map<String, Value>, cable_m: f64) -> Result<u64> {
    let p = LinkParams::from_kernel(link, cable_m, None)?;
    Ok((p.tx_depth as u64 + p.prog_full as u64) * p.fifo_width as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pragmas_are_read_from_the_kernel() {
        // send_rows reads two memory words per trip from one m_axi port
        assert_eq!(initiation_interval("send_rows").unwrap(), 2);
        assert_eq!(initiation_interval("sweep_words").unwrap(), 1);
        assert!(initiation_interval("no_such_loop").is_err());
    }

    #[test]
    fn a_long_row_is_link_bound_and_a_tall_slab_compute_bound() {
        let layout = Layout::of_kernel().unwrap();
        let none = Map::new();
        // one row of one word: a few cycles of loops against the link's latency (PG074's
        // 54-55 user-clock cycles of the Aurora core alone are over 100 ns)
        let short = iteration(&layout, 1, 16, 250.0, &none, 5.0).unwrap();
        assert!(short.link_latency_s > 100e-9);
        assert_eq!(short.bound, "link");
        // 8192 cells = 32 KiB per row: the send loop (II 2) is slower than the link
        let wide = iteration(&layout, 1, 8192, 250.0, &none, 5.0).unwrap();
        assert_eq!(wide.send_cycles, 1024);
        assert_eq!(wide.bound, "compute");
        // 2 us of sweep (500 rows x 1 word at 250 MHz) against a 64 B row
        let tall = iteration(&layout, 500, 16, 250.0, &none, 5.0).unwrap();
        assert_eq!(tall.sweep_cycles, 500);
        assert!((tall.sweep_s - 2e-6).abs() < 1e-12);
        assert_eq!(tall.bound, "compute");
    }
}
