//! The host's PCIe link to one card: what it can carry each way, from the platform's name.
//!
//! AMD names a shell `<vendor>_<board>_<pcie>_<shell>_<version>` (UG1120, "Platform naming"),
//! the PCIe generation and lanes in it: `xilinx_u280_gen3x16_xdma_1_202211_1` is PCIe Gen3
//! x16, the first of the interfaces AMD DS963 (Alveo U280 data sheet, v1.7) lists (Gen3 x16,
//! Gen4 x8, CCIX). So the name topology.json already carries is the one source of the figure.
//!
//! The usable rate each way: lanes × transfer rate × line-code efficiency (PCI Express Base
//! Specification 4.0: Gen1/Gen2 2.5/5 GT/s, 8b/10b; Gen3/Gen4 8/16 GT/s, 128b/130b) × the
//! share of a TLP that is payload at a 256 B maximum payload (the usual server setting): 26 B
//! ride along each TLP (4 B framing token, 2 B sequence number, 16 B header of a 64-bit
//! memory request, 4 B LCRC), 256 / 282 = 90.8 %. Gen3 x16 thus carries 15.75 GB/s on the
//! wire and 14.30 GB/s of payload each way. DMA descriptors, flow-control credits and the
//! host's memory are not counted: measured XDMA figures land below this.

use anyhow::{bail, Context, Result};

/// Payload bytes per TLP the model assumes (PCIe Max_Payload_Size).
pub const MAX_PAYLOAD_BYTES: f64 = 256.0;
/// Bytes each TLP adds on the link: framing token, sequence number, 4-DW header, LCRC.
pub const TLP_OVERHEAD_BYTES: f64 = 4.0 + 2.0 + 16.0 + 4.0;

#[derive(Debug, Clone, PartialEq)]
pub struct HostLink {
    /// "PCIe Gen3 x16".
    pub name: String,
    /// Payload bytes per second, host to card (the input DMA's frames).
    pub in_bytes_per_s: f64,
    /// Payload bytes per second, card to host (the output DMA's results).
    pub out_bytes_per_s: f64,
}

/// Transfer rate (GT/s) and line-code efficiency of a PCIe generation.
fn generation(gen: u32) -> Option<(f64, f64)> {
    match gen {
        1 => Some((2.5, 8.0 / 10.0)),
        2 => Some((5.0, 8.0 / 10.0)),
        3 => Some((8.0, 128.0 / 130.0)),
        4 => Some((16.0, 128.0 / 130.0)),
        _ => None,
    }
}

impl HostLink {
    /// A link of `lanes` lanes of PCIe generation `gen`, the same each way.
    pub fn pcie(gen: u32, lanes: u32) -> Result<HostLink> {
        let (gt, code) = generation(gen)
            .with_context(|| format!("PCIe Gen{gen}: the model knows Gen1 to Gen4"))?;
        if lanes == 0 {
            bail!("PCIe Gen{gen} x0: a link has lanes");
        }
        let wire = lanes as f64 * gt * 1e9 * code / 8.0;
        let payload = wire * MAX_PAYLOAD_BYTES / (MAX_PAYLOAD_BYTES + TLP_OVERHEAD_BYTES);
        Ok(HostLink {
            name: format!("PCIe Gen{gen} x{lanes}"),
            in_bytes_per_s: payload,
            out_bytes_per_s: payload,
        })
    }

    /// The link a platform's name gives (`..._gen3x16_...`).
    pub fn from_platform(platform: &str) -> Result<HostLink> {
        for part in platform.split('_') {
            let Some(rest) = part.strip_prefix("gen") else {
                continue;
            };
            if let Some((g, l)) = rest.split_once('x') {
                if let (Ok(g), Ok(l)) = (g.parse(), l.parse()) {
                    return HostLink::pcie(g, l);
                }
            }
        }
        bail!(
            "platform {platform:?}: no `gen<G>x<L>` in its name (UG1120 platform naming), so \
             no PCIe link to model; is it an Alveo shell's name?"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gen3_x16_is_the_spec_rate_less_tlp_overhead() {
        let l = HostLink::from_platform("xilinx_u280_gen3x16_xdma_1_202211_1").unwrap();
        assert_eq!(l.name, "PCIe Gen3 x16");
        // 16 lanes × 8 GT/s × 128/130 / 8 bit = 15.7538 GB/s on the wire; × 256/282
        let want = 15.753_846e9 * 256.0 / 282.0;
        assert!(
            (l.in_bytes_per_s - want).abs() < 1e3,
            "{}",
            l.in_bytes_per_s
        );
        assert_eq!(l.in_bytes_per_s, l.out_bytes_per_s);
        // Gen4 x8 carries the same (DS963: the U280 offers either)
        let g4 = HostLink::pcie(4, 8).unwrap();
        assert!((g4.in_bytes_per_s - l.in_bytes_per_s).abs() < 1.0);
    }

    #[test]
    fn a_name_without_pcie_is_refused_naming_it() {
        let e = HostLink::from_platform("my_board").unwrap_err().to_string();
        assert!(
            e.contains("\"my_board\"") && e.contains("gen<G>x<L>"),
            "{e}"
        );
        assert!(HostLink::pcie(7, 16).is_err());
    }
}
