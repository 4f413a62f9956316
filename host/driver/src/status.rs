//! `status` and `reset-counters`: every AuroraFlow CU of every device, through the same
//! `aurora` host API that drives a card.

use std::fmt::Write;
use std::time::Duration;

use anyhow::Result;
use aurora::AuroraFlow;
use fpga_device::{CuRegisters, Device};

/// The report of one device.
pub fn report<D: Device + ?Sized>(
    device: &D,
    device_name: &str,
    rank: i32,
    links: &[(String, String)],
    wait: Duration,
) -> Result<String> {
    let mut out = String::new();
    writeln!(out, "== {device_name} (rank {rank}, {})", device.name())?;
    for cu in device.compute_units()? {
        writeln!(
            out,
            "   CU {} ({}, {}) @ {:#x}",
            cu.name, cu.kernel, cu.kind, cu.base_address
        )?;
    }
    for cu in device
        .compute_units()?
        .iter()
        .filter(|c| c.kernel.starts_with("aurora_flow"))
    {
        let af = AuroraFlow::new(
            cu.name.clone(),
            CuRegisters {
                device,
                cu: cu.name.clone(),
            },
        );
        let up = af.core_status_ok(wait)?;
        let peer = links
            .iter()
            .find(|(c, _)| *c == cu.name)
            .map_or("not cabled".to_string(), |(_, p)| p.clone());
        writeln!(
            out,
            "-- {} link {}: {}",
            cu.name,
            peer,
            if up { "UP" } else { "DOWN" }
        )?;
        writeln!(out, "   CORE_STATUS     {}", af.core_status()?)?;
        writeln!(out, "   CONFIGURATION   {}", af.configuration()?)?;
        let t = af.fifo_thresholds()?;
        writeln!(
            out,
            "   FIFO_THRESHOLDS prog_full {} prog_empty {} (words)",
            t.prog_full, t.prog_empty
        )?;
        writeln!(out, "   FIFO_STATUS     {:?}", af.fifo_status()?)?;
        for (name, value) in af.counters()?.named() {
            writeln!(out, "   {name:<24} {value}")?;
        }
    }
    Ok(out)
}

pub fn reset_counters<D: Device + ?Sized>(device: &D) -> Result<usize> {
    let mut n = 0;
    for cu in device
        .compute_units()?
        .iter()
        .filter(|c| c.kernel.starts_with("aurora_flow"))
    {
        AuroraFlow::new(
            cu.name.clone(),
            CuRegisters {
                device,
                cu: cu.name.clone(),
            },
        )
        .reset_counters()?;
        n += 1;
    }
    Ok(n)
}
