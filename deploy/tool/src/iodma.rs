//! The stream width of the DMAs at a FINN pipeline's ends, chosen as FINN chooses it, and
//! the DMA kernel built for that width.
//!
//! finn-plus 1.6.1 `InsertIODMA` (finn/transformation/fpgadataflow/insert_iodma.py) gives
//! the DMA of a graph input or output the interface width
//! `gcd(padded stream width x prod(folded shape[:-1]), max_intfwidth)`, with `max_intfwidth`
//! = `vitis_iodma_intf_max_width` = 512 in a Vitis build (build_dataflow_config.py): a
//! frame is then a whole number of DMA words, so no width converter between the DMA and the
//! partition ever holds part of a word when the last frame has passed (FINN's streams carry
//! no TLAST that could push it out).

use anyhow::{bail, Result};

use crate::kernel::{padded, Kernel, Port};

/// `vitis_iodma_intf_max_width` of finn-plus 1.6.1 (and the DMA kernels' memory word).
pub const MAX_WIDTH: u64 = 512;

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// InsertIODMA's width for the FINN port `finn_port` of `cu` (its `stream_bits` and
/// `frame_bits`).
pub fn width(cu: &str, finn_port: &Port) -> Result<u64> {
    let bits = finn_port.stream_bits();
    let Some(frame) = finn_port
        .extra
        .get("frame_bits")
        .and_then(serde_json::Value::as_u64)
    else {
        bail!(
            "{cu}.{}: the plan records no frame size for this stream (in_bits_per_frame / \
             out_bits_per_frame of its layer), which the DMA's width follows; regenerate the \
             plan with this project's finn-partition",
            finn_port.name
        );
    };
    let words = frame / bits.max(1);
    let w = gcd(padded(bits) * words, MAX_WIDTH);
    // Padded widths are whole bytes, so a frame is too; InsertIODMA asserts the same.
    if !w.is_multiple_of(8) {
        bail!(
            "{cu}.{}: no whole-byte DMA width divides a frame of {words} words of {} bits \
             (gcd {w})",
            finn_port.name,
            padded(bits)
        );
    }
    Ok(w)
}

/// The kernel among `kernels` whose v++ name is `top` and whose stream port (`dir`) is
/// `width` bits wide: the DMA built with `DMA_STREAM_WIDTH` = `width`.
pub fn kernel<'k>(kernels: &'k [Kernel], top: &str, dir: &str, width: u64) -> Result<&'k Kernel> {
    let candidates: Vec<&Kernel> = kernels.iter().filter(|k| k.vpp_name() == top).collect();
    let stream_width = |k: &Kernel| k.only("axis", dir).map(|p| p.width).ok();
    if let Some(k) = candidates.iter().find(|k| stream_width(k) == Some(width)) {
        return Ok(k);
    }
    let built: Vec<String> = candidates
        .iter()
        .map(|k| match stream_width(k) {
            Some(w) => format!("{} ({w} bits)", k.name),
            None => k.name.clone(),
        })
        .collect();
    let target = if width == MAX_WIDTH {
        format!("//hw/hls:{top}")
    } else {
        format!("//hw/hls:{top}_w{width}")
    };
    bail!(
        "no --kernel `{top}` with a {width}-bit stream (finn-plus InsertIODMA's width for this \
         end of the pipeline: gcd(frame bits, {MAX_WIDTH})); given: [{}]; add {target} to the \
         deployment's kernels",
        built.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finn_port(stream_bits: u64, frame_bits: u64) -> Port {
        serde_json::from_value(serde_json::json!({
            "name": "m_axis_0", "kind": "axis", "dir": "out", "width": padded(stream_bits),
            "stream_bits": stream_bits, "frame_bits": frame_bits,
        }))
        .unwrap()
    }

    #[test]
    fn widths_as_insert_iodma_computes_them() {
        // MobileNet-V1's LabelSelect: 5 words of 16 bits per frame -> gcd(80, 512) = 16.
        assert_eq!(width("c", &finn_port(16, 80)).unwrap(), 16);
        // Its FMPadding input: 24-bit words, 224 x 224 per frame -> 1204224 bits, 512 | it.
        assert_eq!(width("c", &finn_port(24, 224 * 224 * 24)).unwrap(), 512);
        // A 12-bit stream is padded to 16 bits before the gcd: 3 words -> gcd(48, 512) = 16.
        assert_eq!(width("c", &finn_port(12, 36)).unwrap(), 16);
        // Three 8-bit labels: gcd(24, 512) = 8.
        assert_eq!(width("c", &finn_port(8, 24)).unwrap(), 8);
    }

    #[test]
    fn a_port_without_a_frame_size_is_named() {
        let mut p = finn_port(8, 24);
        p.extra.remove("frame_bits");
        let e = width("finn_fpga1", &p).unwrap_err().to_string();
        assert!(
            e.contains("finn_fpga1.m_axis_0") && e.contains("frame size"),
            "{e}"
        );
    }
}
