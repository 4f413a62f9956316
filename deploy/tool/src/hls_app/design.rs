//! One device of the HLS app: its CUs, the streams on the card, each cross-card stream into
//! its link kernel's `tx_axis` (sender) or out of its `rx_axis` (receiver), memory banks
//! (the description's, else in order), and tie-offs on a used cable's unused direction.
//! The description was checked against the kernels first (`check`).

use std::collections::BTreeSet;

use anyhow::Result;

use super::check::{args, kernel_of};
use crate::deployment::End;
use crate::instances::{
    aurora_cu_name, pr, tie_off_idle_directions, Cu, DeviceDesign, Inputs, Memory, Stream,
};

/// Whether the app uses the cable end `here`, and if so which direction stays idle
/// (`idle_tx`, `idle_rx`): a cable no stream uses gets no link kernel.
pub fn cable_use(inp: &Inputs, here: &End) -> Option<(bool, bool)> {
    let (tx, rx) = inp.dep.hls.over(here);
    (!tx.is_empty() || !rx.is_empty()).then_some((tx.is_empty(), rx.is_empty()))
}

pub fn device(d: &mut DeviceDesign, inp: &Inputs) -> Result<()> {
    let dep = inp.dep;
    let app = &dep.hls;
    for cu in app.cus_of(&d.device) {
        d.cus.push(Cu {
            name: cu.cu.clone(),
            kernel: kernel_of(dep, inp.kernels, cu)?.clone(),
            slr: cu.slr.clone(),
            qsfp: None,
        });
    }
    for s in &app.streams {
        let (from, to) = (pr(&s.from.cu, &s.from.port), pr(&s.to.cu, &s.to.port));
        let st = match &s.cable {
            None if s.from.device == d.device => Some((from, to)),
            Some(c) if s.from.device == d.device => {
                Some((from, pr(&aurora_cu_name(c.from.port), "tx_axis")))
            }
            Some(c) if s.to.device == d.device => {
                Some((pr(&aurora_cu_name(c.to.port), "rx_axis"), to))
            }
            _ => None,
        };
        if let Some((from, to)) = st {
            d.streams.push(Stream {
                from,
                to,
                depth: s.depth,
            });
        }
    }
    // Banks in order for the m_axi ports the description leaves to the tool, skipping the
    // ones it names on this device.
    let named: BTreeSet<&str> = app
        .cus_of(&d.device)
        .flat_map(|c| c.memory.iter().map(|(_, b, _)| b.as_str()))
        .collect();
    let mut next = 0u32;
    let mut free_bank = || loop {
        let b = format!("HBM[{next}]");
        next += 1;
        if !named.contains(b.as_str()) {
            return b;
        }
    };
    for cu in app.cus_of(&d.device) {
        let k = kernel_of(dep, inp.kernels, cu)?;
        for a in args(k, "memory") {
            let (Some(name), Some(port)) = (a["name"].as_str(), a["port"].as_str()) else {
                continue;
            };
            let chosen = cu.memory.iter().find(|(arg, _, _)| arg == name);
            // Arguments sharing a bundle share its port, and so its bank.
            if let Some(m) = d
                .memory
                .iter()
                .find(|m| m.port.cu == cu.cu && m.port.port == port)
            {
                match chosen {
                    Some((_, bank, span)) if *bank != m.bank => {
                        return Err(dep.src.at(
                            span,
                            format!(
                                "CU {}: {name} shares the m_axi port {port} with another \
                                 argument bound to {}; one port has one bank: give both the \
                                 same bank or separate bundles",
                                cu.cu, m.bank
                            ),
                        ))
                    }
                    _ => continue,
                }
            }
            let (bank, span) = match chosen {
                Some((_, bank, span)) => (bank.clone(), Some(span.clone())),
                None => (free_bank(), None),
            };
            d.memory.push(Memory {
                port: pr(&cu.cu, port),
                bank,
                span,
            });
        }
    }
    let first_tie_off_bank = {
        let b = free_bank();
        b["HBM[".len()..b.len() - 1].parse::<u32>().unwrap_or(0)
    };
    tie_off_idle_directions(d, inp.kernels, first_tie_off_bank)
}
