//! What a run reports: each card's CU, streams and link counters, rank 0's verdict against
//! the reference and the modelled time per iteration; printed, and as JSON with `--json`.

use std::path::Path;

use anyhow::{Context, Result};
use auroraforge_host::Session;
use jacobi_host::model::IterationModel;
use serde::{Deserialize, Serialize};
use xclbin::DeviceDescription;

use crate::run::Args;

/// One QSFP port's AuroraFlow counters after the run (words are the link kernel's 64 B).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Port {
    pub port: u32,
    /// "fpga1:0": the other end of its cable.
    pub peer: String,
    pub cable_m: f64,
    pub tx_words: u32,
    pub rx_words: u32,
    pub xoff: u32,
    pub xon: u32,
    pub rx_overflow: u32,
    pub tx_overflow: u32,
    pub frames_with_errors: u32,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Card {
    pub rank: usize,
    pub device: String,
    pub cu: String,
    /// The card's stream connections, "from -> to" (its link configuration).
    pub streams: Vec<String>,
    pub ports: Vec<Port>,
    /// From start to the end of the wait, in the simulation's wall time (not a hardware
    /// figure; on rank 0 at least as long as its reference takes).
    pub wall_s: f64,
}

impl Card {
    pub fn of(s: &Session, d: &DeviceDescription, cu: &str, wall_s: f64) -> Result<Card> {
        let ports = s
            .link_status()?
            .into_iter()
            .map(|(port, c)| {
                let link = d.links.iter().find(|l| l.port == port);
                Port {
                    port,
                    peer: link.map_or("-".into(), |l| format!("{}:{}", l.peer_device, l.peer_port)),
                    cable_m: link.map_or(0.0, |l| l.cable_m),
                    tx_words: c.tx_count,
                    rx_words: c.rx_count,
                    xoff: c.nfc_full_trigger,
                    xon: c.nfc_empty_trigger,
                    rx_overflow: c.fifo_rx_overflow,
                    tx_overflow: c.fifo_tx_overflow,
                    frames_with_errors: c.frames_with_errors,
                }
            })
            .collect();
        Ok(Card {
            rank: s.rank(),
            device: s.device_name().to_string(),
            cu: cu.to_string(),
            streams: d
                .streams
                .iter()
                .map(|st| format!("{} -> {}", st.from, st.to))
                .collect(),
            ports,
            wall_s,
        })
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub cards: usize,
    pub rows_per_card: u32,
    pub cols: u32,
    pub iterations: u32,
    pub bit_exact: bool,
    pub cells: usize,
    pub mismatches: usize,
    /// (row, column, card's value, reference's value) of the first differing cell.
    pub first_mismatch: Option<(usize, usize, u32, u32)>,
    pub per_card: Vec<Card>,
    pub model: IterationModel,
}

impl Outcome {
    pub fn new(
        a: &Args,
        cards: usize,
        got: &[u32],
        want: &[u32],
        per_card: Vec<Card>,
        model: IterationModel,
    ) -> Outcome {
        let cols = a.cols as usize;
        let differ: Vec<usize> = (0..want.len())
            .filter(|&i| got.get(i) != Some(&want[i]))
            .collect();
        Outcome {
            cards,
            rows_per_card: a.rows,
            cols: a.cols,
            iterations: a.iterations,
            bit_exact: differ.is_empty() && got.len() == want.len(),
            cells: want.len(),
            mismatches: differ.len(),
            first_mismatch: differ.first().map(|&i| {
                (
                    i / cols,
                    i % cols,
                    got.get(i).copied().unwrap_or(0),
                    want[i],
                )
            }),
            per_card,
            model,
        }
    }
}

fn us(s: f64) -> String {
    format!("{:.3} us", s * 1e6)
}

pub fn print(o: &Outcome) {
    println!(
        "jacobi: {} cards x {} rows x {} columns = a {} x {} grid, {} iterations",
        o.cards,
        o.rows_per_card,
        o.cols,
        o.cards as u32 * o.rows_per_card,
        o.cols,
        o.iterations
    );
    match o.first_mismatch {
        None => println!(
            "bit-exact: yes ({} cells equal the whole-grid reference)",
            o.cells
        ),
        Some((r, c, got, want)) => println!(
            "bit-exact: no ({} of {} cells differ; first at row {r} column {c}: {got}, reference {want})",
            o.mismatches, o.cells
        ),
    }
    for card in &o.per_card {
        println!(
            "card {} (rank {}): CU {}, kernel run {:.3} s (simulation wall time)",
            card.device, card.rank, card.cu, card.wall_s
        );
        for s in &card.streams {
            println!("  stream {s}");
        }
        for p in &card.ports {
            println!(
                "  port {} <-> {} ({} m): tx {} rx {} words, XOFF {} XON {}, overflow rx {} tx {}, frames with errors {}",
                p.port, p.peer, p.cable_m, p.tx_words, p.rx_words, p.xoff, p.xon,
                p.rx_overflow, p.tx_overflow, p.frames_with_errors
            );
        }
    }
    let m = &o.model;
    println!(
        "model per iteration at {} MHz: sweep {} cycles = {}; halo exchange max(loops {} cycles, link {} = latency {} + a {} B row at the link's limit of {:.2} Gbit/s) = {}; per iteration {}, bound: {}",
        m.clock_mhz,
        m.sweep_cycles,
        us(m.sweep_s),
        m.send_cycles + m.receive_cycles,
        us(m.link_s),
        us(m.link_latency_s),
        m.row_bytes,
        m.link_bits_per_s / 1e9,
        us(m.exchange_s),
        us(m.iteration_s),
        m.bound
    );
}

/// Writes the outcome as JSON, whole or not at all (a temporary file renamed into place).
pub fn write_json(path: &Path, o: &Outcome) -> Result<()> {
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(o)? + "\n";
    std::fs::write(&tmp, text).with_context(|| format!("--json: writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("--json: renaming to {}", path.display()))?;
    println!("json: {}", path.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use jacobi_host::layout::Layout;

    fn outcome(got: &[u32], want: &[u32]) -> Outcome {
        let a = Args {
            rows: 1,
            cols: 16,
            iterations: 1,
            json: None,
        };
        let model = jacobi_host::model::iteration(
            &Layout::of_kernel().unwrap(),
            1,
            16,
            250.0,
            &Default::default(),
            5.0,
        )
        .unwrap();
        Outcome::new(&a, 2, got, want, Vec::new(), model)
    }

    #[test]
    fn one_differing_cell_is_found_by_row_and_column() {
        let want: Vec<u32> = (0..32).collect();
        let mut got = want.clone();
        assert!(outcome(&got, &want).bit_exact);
        got[21] = 7;
        let o = outcome(&got, &want);
        assert!(!o.bit_exact);
        assert_eq!(o.mismatches, 1);
        // cell 21 of a 16-column grid: row 1, column 5
        assert_eq!(o.first_mismatch, Some((1, 5, 7, 21)));
        // a short result is no match either
        assert!(!outcome(&want[..16], &want).bit_exact);
    }
}
