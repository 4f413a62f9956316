//! The simulated links' receiving side, for every AuroraFlow CU of a rank: without
//! `--throttle-us` the receiving kernel reads as AuroraFlow's recv does, one word per ap_clk
//! cycle (the consumer rate follows from the device clock); with it, a slow one pausing every
//! 64 words, so the RX FIFO fills and the flow control (XOFF/XON) fires. Refused on cards,
//! where there is no link model to slow.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Result};
use fpga_device::sim::aurora_cu::AuroraCu;
use fpga_device::sim::link::LINK_CLOCK_MHZ;

/// `aurora`: the rank's simulated AuroraFlow CUs by port (empty on cards); `modelled`: the
/// links are simulated; `clock_mhz`: the device's kernel clock.
pub fn set_up(
    aurora: &BTreeMap<u32, Arc<AuroraCu>>,
    clock_mhz: f64,
    throttle_us: u64,
    modelled: bool,
) -> Result<()> {
    if throttle_us > 0 && !modelled {
        bail!(
            "--throttle-us slows the simulated receiving kernel; on a card AuroraFlow's recv reads at one word per cycle (run without it)"
        );
    }
    for c in aurora.values() {
        if let Some(l) = &c.rx_link() {
            l.set_consumer_rate((throttle_us == 0).then(|| clock_mhz / LINK_CLOCK_MHZ));
        }
        c.set_rx_throttle(Duration::from_micros(throttle_us));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn throttling_is_refused_on_cards() {
        let e = super::set_up(&Default::default(), 250.0, 5, false).unwrap_err();
        assert!(
            e.to_string().contains("--throttle-us slows the simulated"),
            "{e}"
        );
        super::set_up(&Default::default(), 250.0, 0, false).unwrap();
    }
}
