//! An AuroraFlow link's latency and bandwidth, from the link model the simulated devices run
//! (`fpga_device::sim::link`) with the kernel's parameters (kernel.toml defaults unless the
//! kernel description sets them) and the cable length.

use anyhow::Result;
use fpga_device::sim::link::{self, LinkParams, LINK_BEAT_BYTES, LINK_CLOCK_MHZ, TX_IDLE_PERIOD};
use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkModel {
    /// One way, first word in to first word out: the core's TX->RX latency plus the fibre.
    pub latency_s: f64,
    /// Payload bits per second: the serialiser's share of cycles that carry data, or the
    /// kernel's user stream (`fifo_width` bytes per ap_clk cycle) when that is narrower.
    pub bits_per_s: f64,
    pub latency_cycles: u64,
    /// The receiver's RX FIFO: what may be on its way or waiting at the receiver.
    pub rx_fifo_bytes: u64,
}

/// The fraction of link cycles in which the serialiser sends (gearbox and clock compensation
/// take the rest), counted over one period of the simulator's idle pattern.
pub fn payload_fraction() -> f64 {
    let busy = (0..TX_IDLE_PERIOD).filter(|&c| !link::tx_idle(c)).count();
    busy as f64 / TX_IDLE_PERIOD as f64
}

impl LinkModel {
    pub fn new(params: &Map<String, Value>, cable_m: f64, ap_clk_mhz: f64) -> Result<LinkModel> {
        let p = LinkParams::from_kernel(params, cable_m, None)?;
        let cycles = p.latency_cycles();
        let link_bps = payload_fraction() * (LINK_BEAT_BYTES as f64 * 8.0) * LINK_CLOCK_MHZ * 1e6;
        let user_bps = p.fifo_width as f64 * 8.0 * ap_clk_mhz * 1e6;
        Ok(LinkModel {
            latency_s: cycles as f64 / (LINK_CLOCK_MHZ * 1e6),
            bits_per_s: link_bps.min(user_bps),
            latency_cycles: cycles,
            rx_fifo_bytes: p.rx_depth as u64 * p.fifo_width as u64,
        })
    }
}
