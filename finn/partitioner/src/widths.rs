//! A layer's stream widths under a folding, as finn-plus 1.6.1 computes them: each op's
//! `get_instream_width(0)` / `get_outstream_width(0)` is its datatype's bits times one
//! folding attribute (`custom_op/fpgadataflow/*.py`), and which attribute differs per op
//! (an MVAU takes SIMD inputs in and gives PE outputs out). The exported widths are FINN's
//! own, so the width under another folding is the exported one scaled by that attribute.

use crate::cost::{self, Fold, Kind};
use crate::estimates::Layer;

/// The folding factor FINN's `get_instream_width(0)` multiplies the input bits by, `None`
/// for an op whose width the partitioner never changes (it offers it one folding only).
fn in_factor(l: &Layer, f: Fold) -> Option<i64> {
    let op = l.op_type.as_str();
    match cost::kind(op) {
        // matrixvectoractivation.py: i_bits * SIMD
        Kind::Mvau { .. } => Some(f.simd),
        // vectorvectoractivation.py: i_bits * SIMD * PE
        Kind::Vvau { .. } => Some(f.simd * f.pe),
        // convolutioninputgenerator.py: SIMD * ibits
        Kind::Swg => Some(f.simd),
        // fmpadding.py: ibits * SIMD; thresholding.py, pool.py, labelselect.py,
        // elementwise_binary.py (last folded dim = PE): bits * PE
        Kind::Linear { par_attr } => Some(if par_attr == "SIMD" { f.simd } else { f.pe }),
        Kind::Other => None,
    }
}

/// The input stream width of layer `l` with folding `f`, bits (its first input, the one a
/// graph input or a cut feeds).
pub fn in_stream_bits(l: &Layer, f: Fold) -> u64 {
    scale(
        l.in_stream_bits,
        in_factor(l, cost::current_fold(l)),
        in_factor(l, f),
    )
}

/// The output stream width of a [`Kind::Linear`] op with folding `f`, bits:
/// `o_bits * PE` (SIMD for FMPadding), except LabelSelect, whose output is one label
/// index per cycle whatever its PE (labelselect.py: `get_output_datatype().bitwidth()`).
pub fn linear_out_stream_bits(l: &Layer, f: Fold) -> u64 {
    if l.op_type.starts_with("LabelSelect") {
        return l.out_stream_bits;
    }
    let factor = |f: Fold| match cost::kind(&l.op_type) {
        Kind::Linear { par_attr: "SIMD" } => Some(f.simd),
        _ => Some(f.pe),
    };
    scale(l.out_stream_bits, factor(cost::current_fold(l)), factor(f))
}

/// `width` (bits x `from`) rescaled to bits x `to`; unchanged without both factors.
fn scale(width: u64, from: Option<i64>, to: Option<i64>) -> u64 {
    match (from, to) {
        (Some(a), Some(b)) if a > 0 && b > 0 => width / a as u64 * b as u64,
        _ => width,
    }
}
