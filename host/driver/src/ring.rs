//! `bench` on a ring of pass-through cards (`role = "forward"`, AuroraFlow's
//! `aurora_flow_ring_hw.cfg`): which cable ends exist on which rank and node, the path a
//! benchmark message takes from its sending port around the ring back to a receiving port,
//! and per hop the monitor counters and modelled times read after each message size, with
//! the check that both ends of every cable counted the same words.

use std::collections::BTreeMap;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use xclbin::DeviceDescription;

use crate::link_config::stream_peer;
pub use run_report::ring::{Hop, RingLane, Sample};

/// The kernel that passes one port's stream on to the other on a ring card.
pub const FORWARD_KERNEL: &str = "forward";

/// One cabled AuroraFlow CU: the receiving end of a hop (and the sending end of the next).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct End {
    pub device: String,
    pub rank: i32,
    pub host: String,
    pub port: u32,
    /// Who sends into this port: the cable's other end (device, port).
    pub from: (String, u32),
    /// A pass-through card: the port whose transmitter this port's words leave by.
    pub feeds: Option<u32>,
}

/// A pass-through card's forwarding, rx port -> tx port, from its link configuration
/// (`forward_i.in` on one AuroraFlow CU's rx_axis, `forward_i.out` on another's tx_axis).
pub fn forwarding(d: &DeviceDescription) -> BTreeMap<u32, u32> {
    let port_of = |endpoint: &str| -> Option<u32> {
        let cu = endpoint.split('.').next()?;
        let k = d.kernel(cu)?;
        k.params
            .get("instance")
            .and_then(|v| v.as_u64())
            .or_else(|| cu.rsplit('_').next().and_then(|s| s.parse().ok()))
            .map(|p| p as u32)
    };
    let mut map = BTreeMap::new();
    for k in d.kernels.iter().filter(|k| k.kernel == FORWARD_KERNEL) {
        let into = d
            .streams
            .iter()
            .find(|s| s.to.starts_with(&format!("{}.", k.cu)));
        let out = d
            .streams
            .iter()
            .find(|s| s.from.starts_with(&format!("{}.", k.cu)));
        if let (Some(i), Some(o)) = (into, out) {
            if let (Some(rx), Some(tx)) = (port_of(&i.from), port_of(&o.to)) {
                map.insert(rx, tx);
            }
        }
    }
    map
}

/// Whether every cabled port of this card carries a pass-through (its rank takes part in
/// the benchmark without sending or receiving itself).
pub fn passes_through(d: &DeviceDescription, cabled: &[(u32, String)]) -> bool {
    !cabled.is_empty()
        && cabled.iter().all(|(_, cu)| {
            stream_peer(d, &format!("{cu}.tx_axis"))
                .and_then(|p| d.kernel(&p).map(|k| k.kernel == FORWARD_KERNEL))
                .unwrap_or(false)
        })
}

/// The hops a message takes into `(device, port)`, first hop first, and its origin: the
/// sending port of the first card that is not a pass-through.
pub fn path<'a>(ends: &'a [End], device: &str, port: u32) -> Result<(Vec<&'a End>, (String, u32))> {
    let find = |dev: &str, p: u32| ends.iter().find(|e| e.device == dev && e.port == p);
    let mut hop = find(device, port)
        .with_context(|| format!("no rank reports the cable end {device}:{port}"))?;
    let mut hops = vec![hop];
    loop {
        let (from_dev, from_port) = &hop.from;
        // the sending card forwards what one of its ports received
        let Some(prev) = ends
            .iter()
            .find(|e| e.device == *from_dev && e.feeds == Some(*from_port))
        else {
            hops.reverse();
            return Ok((hops, hop.from.clone()));
        };
        if hops.len() > ends.len() {
            bail!("the ring into {device}:{port} has no sending card: every card on it passes through");
        }
        hop = prev;
        hops.push(hop);
    }
}

/// The cables whose two ends disagree (TX_COUNT of the sender, RX_COUNT of the receiver) or
/// lost words, one line each.
pub fn inconsistencies(hops: &[Hop]) -> Vec<String> {
    let mut out = Vec::new();
    for h in hops {
        let sender = hops
            .iter()
            .find(|s| format!("{}:{}", s.device, s.port) == h.from);
        match sender {
            Some(s) if s.tx_count != h.rx_count => out.push(format!(
                "cable {} -> {}:{}: TX_COUNT {} at {} (rank {}), RX_COUNT {} at {}:{} (rank {})",
                h.from,
                h.device,
                h.port,
                s.tx_count,
                h.from,
                s.rank,
                h.rx_count,
                h.device,
                h.port,
                h.rank
            )),
            Some(_) => {}
            None => out.push(format!(
                "cable {} -> {}:{}: no rank read its sending end",
                h.from, h.device, h.port
            )),
        }
        if h.rx_overflow > 0 {
            out.push(format!(
                "{}:{} (rank {}): FIFO_RX_OVERFLOW_COUNT {}",
                h.device, h.port, h.rank, h.rx_overflow
            ));
        }
    }
    out
}

/// The ring's modelled time for what arrived at `hops`' last end, link cycles: every hop's
/// first-word latency, plus the longest hop's stream (the hops stream concurrently; the
/// pass-through kernels add none in the model).
pub fn ring_cycles(hops: &[&Hop]) -> (u64, u64) {
    let first: u64 = hops.iter().map(|h| h.first_cycles).sum();
    let span = hops.iter().map(|h| h.span_cycles).max().unwrap_or(0);
    (first, first + span)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A ring of `n` cards as the deploy tool cables it (QSFP 1 of card i to QSFP 0 of card
    /// i+1), card 0 benchmarking, the others forwarding 0 -> 1 and 1 -> 0.
    fn ring(n: usize) -> Vec<End> {
        let mut ends = Vec::new();
        for i in 0..n {
            let (prev, next) = ((i + n - 1) % n, (i + 1) % n);
            for (port, from) in [(0, (prev, 1)), (1, (next, 0))] {
                ends.push(End {
                    device: format!("fpga{i}"),
                    rank: i as i32,
                    host: format!("n{:02}", i / 3 + 1),
                    port,
                    from: (format!("fpga{}", from.0), from.1),
                    feeds: (i > 0).then_some(1 - port),
                });
            }
        }
        ends
    }

    #[test]
    fn a_message_into_fpga0_port_0_left_by_its_port_1_and_crossed_every_card() {
        let ends = ring(4);
        let (hops, origin) = path(&ends, "fpga0", 0).unwrap();
        assert_eq!(origin, ("fpga0".to_string(), 1));
        let names: Vec<String> = hops
            .iter()
            .map(|e| format!("{}:{}", e.device, e.port))
            .collect();
        assert_eq!(names, ["fpga1:0", "fpga2:0", "fpga3:0", "fpga0:0"]);
        let (hops, origin) = path(&ends, "fpga0", 1).unwrap();
        assert_eq!(origin, ("fpga0".to_string(), 0));
        assert_eq!(hops.len(), 4);
        assert_eq!((hops[0].device.as_str(), hops[0].port), ("fpga3", 1));
    }

    #[test]
    fn a_ring_without_a_sending_card_is_refused() {
        let mut ends = ring(3);
        ends.iter_mut().for_each(|e| e.feeds = Some(1 - e.port));
        let e = path(&ends, "fpga0", 0).unwrap_err().to_string();
        assert!(e.contains("no sending card"), "{e}");
    }

    fn hop(device: &str, port: u32, from: &str, tx: u32, rx: u32) -> Hop {
        Hop {
            device: device.into(),
            rank: 0,
            host: "n01".into(),
            port,
            from: from.into(),
            tx_count: tx,
            rx_count: rx,
            xoff: 0,
            xon: 0,
            nfc_latency: 0,
            rx_overflow: 0,
            frames: 0,
            first_cycles: 65,
            span_cycles: 100,
        }
    }

    #[test]
    fn cable_ends_that_disagree_or_lose_words_are_named() {
        let mut hops = vec![
            hop("fpga0", 0, "fpga1:1", 10, 10),
            hop("fpga1", 1, "fpga0:0", 10, 10),
        ];
        assert!(inconsistencies(&hops).is_empty());
        hops[1].rx_count = 9;
        hops[0].rx_overflow = 1;
        let bad = inconsistencies(&hops).join("\n");
        assert!(
            bad.contains("cable fpga0:0 -> fpga1:1: TX_COUNT 10"),
            "{bad}"
        );
        assert!(bad.contains("RX_COUNT 9"), "{bad}");
        assert!(
            bad.contains("fpga0:0 (rank 0): FIFO_RX_OVERFLOW_COUNT 1"),
            "{bad}"
        );
    }

    #[test]
    fn the_ring_time_is_every_latency_plus_the_longest_stream() {
        let (a, mut b) = (hop("fpga0", 0, "x", 0, 0), hop("fpga1", 0, "y", 0, 0));
        b.span_cycles = 300;
        assert_eq!(ring_cycles(&[&a, &b]), (130, 430));
    }
}
