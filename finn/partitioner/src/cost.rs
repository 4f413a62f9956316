//! FINN's analytic cycle and resource estimates, re-implemented so the partitioner can
//! price foldings FINN has not been run with.
//!
//! Each function mirrors the finn-plus 1.6.1 method named in its comment
//! (`finn/custom_op/fpgadataflow/...`). Where FINN's model is itself a constant or
//! missing (Thresholding memory, FF), the value from FINN's report for the exported
//! folding is kept and [`Cost::modelled`] says so.

use anyhow::{bail, Result};

use crate::estimates::Layer;
use crate::resources::Res;
use crate::widths;

/// One folding choice for one layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Fold {
    pub pe: i64,
    pub simd: i64,
    pub parallel_window: bool,
    /// Where an MVAU/VVAU keeps its weights.
    pub mem: MemStyle,
    /// What an HLS MVAU/VVAU multiplies with.
    pub compute: Compute,
}

impl Fold {
    /// A folding with the layer's exported resource types.
    pub fn new(pe: i64, simd: i64, parallel_window: bool) -> Fold {
        Fold {
            pe,
            simd,
            parallel_window,
            mem: MemStyle::Exported,
            compute: Compute::Exported,
        }
    }
}

/// FINN's `ram_style` of a weight memory (with `mem_mode = internal_decoupled`, the only
/// mode in which FINN's estimate, and its hardware, follow the attribute).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MemStyle {
    /// As exported (no attribute in the folding config).
    Exported,
    Block,
    Ultra,
    Distributed,
}

impl MemStyle {
    /// The attribute value FINN understands, None for [`MemStyle::Exported`].
    pub fn attr(self) -> Option<&'static str> {
        match self {
            MemStyle::Exported => None,
            MemStyle::Block => Some("block"),
            MemStyle::Ultra => Some("ultra"),
            MemStyle::Distributed => Some("distributed"),
        }
    }
}

/// FINN's `resType` of an HLS MVAU/VVAU: multipliers in DSPs or in LUTs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compute {
    Exported,
    Dsp,
    Lut,
}

impl Compute {
    pub fn attr(self) -> Option<&'static str> {
        match self {
            Compute::Exported => None,
            Compute::Dsp => Some("dsp"),
            Compute::Lut => Some("lut"),
        }
    }
}

#[derive(Clone, Debug)]
pub struct Cost {
    pub cycles: u64,
    pub res: Res,
    /// Output stream width in bits per cycle with this folding.
    pub out_stream_bits: u64,
    /// False when the resources are FINN's reported values for the exported folding.
    pub modelled: bool,
}

/// Which FINN estimate model applies to a layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Mvau {
        rtl: bool,
    },
    Vvau {
        rtl: bool,
    },
    Swg,
    /// Ops whose cycles are `channels / parallelism * const` (Thresholding, FMPadding,
    /// Pool, LabelSelect, ElementwiseAdd): the attribute that holds the parallelism.
    Linear {
        par_attr: &'static str,
    },
    Other,
}

pub fn kind(op_type: &str) -> Kind {
    let rtl = op_type.ends_with("_rtl");
    if op_type.starts_with("MVAU") {
        Kind::Mvau { rtl }
    } else if op_type.starts_with("VVAU") {
        Kind::Vvau { rtl }
    } else if op_type.starts_with("ConvolutionInputGenerator") {
        Kind::Swg
    } else if op_type.starts_with("FMPadding") {
        Kind::Linear { par_attr: "SIMD" }
    } else if op_type.starts_with("Thresholding")
        || op_type.starts_with("Pool")
        || op_type.starts_with("LabelSelect")
        || op_type.starts_with("ElementwiseAdd")
    {
        Kind::Linear { par_attr: "PE" }
    } else {
        Kind::Other
    }
}

/// The parallelism dimension a [`Kind::Linear`] op folds over.
pub fn linear_channels(l: &Layer) -> Result<i64> {
    let op = l.op_type.as_str();
    if op.starts_with("Thresholding") || op.starts_with("FMPadding") {
        l.int("NumChannels")
    } else if op.starts_with("Pool") {
        l.int("Channels")
    } else if op.starts_with("LabelSelect") {
        l.int("Labels")
    } else {
        Ok(*l.ints("out_shape")?.last().unwrap_or(&1))
    }
}

/// The folding a layer was exported with.
pub fn current_fold(l: &Layer) -> Fold {
    let get = |k: &str| l.attrs.get(k).and_then(|v| v.as_i64());
    Fold::new(
        get("PE").unwrap_or(1),
        get("SIMD").unwrap_or(1),
        get("parallel_window").unwrap_or(0) != 0,
    )
}

/// U280 (and every UltraScale+) has DSP48E2 slices; Versal parts have DSP58.
fn is_dsp58(fpga_part: &str) -> bool {
    fpga_part.starts_with("xcv")
}

pub fn estimate(l: &Layer, f: Fold, fpga_part: &str) -> Result<Cost> {
    match kind(&l.op_type) {
        Kind::Mvau { rtl } => mvau(l, f, rtl, fpga_part),
        Kind::Vvau { rtl } => vvau(l, f, rtl),
        Kind::Swg => swg(l, f),
        Kind::Linear { par_attr } => {
            let cur = current_fold(l);
            let p0 = if par_attr == "SIMD" { cur.simd } else { cur.pe };
            let p = if par_attr == "SIMD" { f.simd } else { f.pe };
            let ch = linear_channels(l)?;
            if p <= 0 || ch % p != 0 {
                bail!("layer {}: {par_attr}={p} does not divide {ch}", l.name);
            }
            Ok(Cost {
                cycles: l.cycles * p0 as u64 / p as u64,
                res: l.res,
                out_stream_bits: widths::linear_out_stream_bits(l, f),
                modelled: false,
            })
        }
        Kind::Other => Ok(Cost {
            cycles: l.cycles,
            res: l.res,
            out_stream_bits: l.out_stream_bits,
            modelled: false,
        }),
    }
}

fn ceil_div(a: f64, b: f64) -> f64 {
    (a / b).ceil()
}

/// FINN-R BRAM18 count of a weight memory (`matrixvectoractivation.py:bram_estimation`;
/// the VVAU variant divides widths by 8/16/32 instead of 9/18/36).
fn weight_bram(omega: f64, mem_width: f64, vvau: bool) -> f64 {
    let (d9, d18, d36) = if vvau {
        (8.0, 16.0, 32.0)
    } else {
        (9.0, 18.0, 36.0)
    };
    if mem_width == 1.0 {
        ceil_div(omega, 16384.0)
    } else if mem_width == 2.0 {
        ceil_div(omega, 8192.0)
    } else if mem_width <= 4.0 {
        ceil_div(omega, 4096.0) * ceil_div(mem_width, 4.0)
    } else if mem_width <= 9.0 {
        ceil_div(omega, 2048.0) * ceil_div(mem_width, d9)
    } else if mem_width <= 18.0 || omega > 512.0 {
        ceil_div(omega, 1024.0) * ceil_div(mem_width, d18)
    } else {
        ceil_div(omega, 512.0) * ceil_div(mem_width, d36)
    }
}

/// Accumulator width used by the FINN-R LUT model: the declared one, capped by the
/// data-type bound of arXiv:2301.13376.
fn acc_bits(l: &Layer, dot_len: f64, w: f64, a: f64, a_signed: bool) -> Result<f64> {
    let acc = l
        .dtype("accDataType")
        .map(|d| d.bits as f64)
        .unwrap_or(32.0);
    let alpha = dot_len.log2() + w + a - 1.0 - if a_signed { 1.0 } else { 0.0 };
    Ok(acc.min((alpha + (1.0 + 2f64.powf(-alpha)).log2() + 1.0).ceil()))
}

/// FINN-R's multiplier and adder-tree LUTs of one PE with `q` lanes of `w` x `a` bits
/// (no multiplier LUTs when the products go to DSPs).
fn mac_luts(res_type: &str, q: i64, w: f64, a: f64) -> f64 {
    let mult = if res_type == "dsp" {
        0.0
    } else {
        q as f64 * (2.0 * ceil_div(w + a, 6.0) - 1.0) * (w + a)
    };
    let adder = (w + a) * (2.0 * q as f64 - 1.0);
    mult + adder
}

/// FINN-R's LUT estimate for `p` PEs of `per_pe` LUTs each and `c2` for the weights.
fn finn_r_lut(p: i64, per_pe: f64, c2: f64) -> f64 {
    (300.0 + 1.1 * (p as f64 * per_pe) + c2).trunc()
}

/// DSPs for `products` parallel `w` x `a`-bit products, when they go to DSPs at all.
fn dsp_products(res_type: &str, products: i64, w: f64, a: f64) -> f64 {
    if res_type == "dsp" {
        products as f64 * ceil_div(w + a, 48.0)
    } else {
        0.0
    }
}

/// A modelled MVAU/VVAU: `p` PEs, each one output element wide.
fn pe_cost(
    l: &Layer,
    p: i64,
    cycles: u64,
    lut: f64,
    dsp: f64,
    bram: f64,
    uram: f64,
) -> Result<Cost> {
    let obits = l.dtype("outputDataType")?.bits as u64;
    Ok(Cost {
        cycles,
        res: Res {
            lut,
            ff: 0.0,
            bram18: bram,
            uram,
            dsp,
        },
        out_stream_bits: p as u64 * obits,
        modelled: true,
    })
}

fn mvau(l: &Layer, f: Fold, rtl: bool, fpga_part: &str) -> Result<Cost> {
    let (mw, mh) = (l.int("MW")?, l.int("MH")?);
    let (p, q) = (f.pe, f.simd);
    if p <= 0 || q <= 0 || mh % p != 0 || mw % q != 0 {
        bail!(
            "layer {}: PE={p} must divide MH={mh} and SIMD={q} must divide MW={mw}",
            l.name
        );
    }
    let niv: i64 = l.ints("numInputVectors")?.iter().product();
    let th = l.int("TH").unwrap_or(1);
    // get_exp_cycles: (MH/PE)·(MW/SIMD)·prod(numInputVectors)·TH
    let cycles = ((mh as f64 / p as f64) * (mw as f64 / q as f64) * niv as f64 * th as f64) as u64;
    let wdt = l.dtype("weightDataType")?;
    let idt = l.dtype("inputDataType")?;
    let (w, a) = (wdt.bits as f64, idt.bits as f64);
    let omega = (mw * mh) as f64 / (q * p) as f64;
    let wmem = mw * mh / (p * q);
    let mem_width = (q * p) as f64 * w;
    let mmode = l.str_attr("mem_mode");
    let mstyle = f.mem.attr().unwrap_or(l.str_attr("ram_style"));
    let external = mmode == "external" || mmode == "external_mem";
    let small_embedded = mmode == "internal_embedded" && wmem <= 128;
    let decoupled = mmode == "internal_decoupled";
    let bram = if (decoupled && (mstyle == "distributed" || mstyle == "ultra"))
        || small_embedded
        || external
    {
        0.0
    } else {
        weight_bram(omega, mem_width, false)
    };
    let uram = if (decoupled && mstyle != "ultra") || small_embedded || external {
        0.0
    } else {
        ceil_div(mem_width, 72.0) * ceil_div(omega, 4096.0)
    };
    let res_type = f.compute.attr().unwrap_or(l.str_attr("resType"));
    let (lut, dsp) = if rtl {
        // rtl/matrixvectoractivation_rtl.py: LUT is not modelled (0).
        let dsp = if is_dsp58(fpga_part) {
            p as f64 * ceil_div(q as f64, 3.0)
        } else {
            ceil_div(p as f64, 4.0) * q as f64
        };
        (0.0, dsp)
    } else {
        // hls/matrixvectoractivation_hls.py:lut_estimation (FINN-R, c0=300, c1=1.1)
        let c2 = if (decoupled && mstyle == "distributed") || small_embedded {
            (p * q) as f64 * w * ceil_div(wmem as f64, 64.0)
        } else {
            0.0
        };
        let mac = mac_luts(res_type, q, w, a);
        let acc = acc_bits(l, mw as f64, w, a, idt.signed)?;
        let (mut thr, mut comp) = (0.0, 0.0);
        if l.int("noActivation").unwrap_or(1) == 0
            && l.str_attr("ram_style_thresholds") == "distributed"
        {
            let b = l.dtype("outputDataType")?.bits as f64;
            thr = (2f64.powf(b) - 1.0) * acc * ceil_div((mh / p) as f64, 64.0);
            comp = (2f64.powf(b) - 1.0) * acc;
        }
        let lut = finn_r_lut(p, mac + acc + thr + comp, c2);
        (lut, dsp_products(res_type, p * q, w, a))
    };
    pe_cost(l, p, cycles, lut, dsp, bram, uram)
}

fn vvau(l: &Layer, f: Fold, rtl: bool) -> Result<Cost> {
    let ch = l.int("Channels")?;
    let k = l.ints("Kernel")?;
    let dim = l.ints("Dim")?;
    let (p, q) = (f.pe, f.simd);
    let kk = k[0] * k[1];
    if p <= 0 || q <= 0 || ch % p != 0 || kk % q != 0 {
        bail!(
            "layer {}: PE={p} must divide Channels={ch} and SIMD={q} must divide {kk}",
            l.name
        );
    }
    // get_exp_cycles: (C·Kh·Kw)/PE/SIMD · Dim_h·Dim_w
    let cycles = ((ch * kk) as f64 / p as f64 / q as f64 * (dim[0] * dim[1]) as f64) as u64;
    let wdt = l.dtype("weightDataType")?;
    let idt = l.dtype("inputDataType")?;
    let (w, a) = (wdt.bits as f64, idt.bits as f64);
    let wmem = (kk * ch / p) / q;
    let omega = wmem as f64;
    let mem_width = (q * p) as f64 * w;
    let mmode = l.str_attr("mem_mode");
    let mstyle = f.mem.attr().unwrap_or(l.str_attr("ram_style"));
    let decoupled = mmode == "internal_decoupled";
    let bram = if (decoupled && (mstyle == "distributed" || mstyle == "ultra"))
        || (mstyle == "auto" && wmem <= 128)
        || (mmode == "internal_embedded" && wmem <= 128)
        || mmode == "external"
    {
        0.0
    } else {
        weight_bram(omega, mem_width, true)
    };
    let uram = if (decoupled && mstyle != "ultra")
        || mmode == "internal_embedded"
        || mmode == "external"
    {
        0.0
    } else {
        ceil_div(mem_width, 72.0) * ceil_div(omega, 4096.0)
    };
    let res_type = f.compute.attr().unwrap_or(l.str_attr("resType"));
    let (lut, dsp) = if rtl {
        (0.0, p as f64 * ceil_div(q as f64, 3.0))
    } else {
        // hls/vectorvectoractivation_hls.py:lut_estimation
        let c2 = if (decoupled && mstyle == "distributed")
            || (mmode == "internal_embedded" && wmem <= 128)
        {
            (p * q) as f64 * w * ceil_div(wmem as f64, 64.0)
        } else {
            0.0
        };
        let mac = mac_luts(res_type, q, w, a);
        let acc = acc_bits(l, kk as f64, w, a, idt.signed)?;
        let (mut thr, mut comp) = (0.0, 0.0);
        if l.int("noActivation").unwrap_or(1) == 0 {
            let b = l.dtype("outputDataType")?.bits as f64;
            thr = (2f64.powf(b) - 1.0) * acc * (ch / p) as f64 / 64.0;
            comp = (2f64.powf(b) - 1.0) * acc;
        }
        let lut = finn_r_lut(p, mac + acc + thr + comp, c2);
        (lut, dsp_products(res_type, p, w, a))
    };
    pe_cost(l, p, cycles, lut, dsp, bram, uram)
}

/// `rtl/convolutioninputgenerator_rtl.py` (2D only; 1D layers keep their exported cost).
fn swg(l: &Layer, f: Fold) -> Result<Cost> {
    let c = l.int("IFMChannels")?;
    let k = l.ints("ConvKernelDim")?;
    let ifm = l.ints("IFMDim")?;
    let ofm = l.ints("OFMDim")?;
    let s = l.ints("Stride")?;
    let dil = l.ints("Dilation")?;
    let depthwise = l.int("depthwise").unwrap_or(0) != 0;
    let m = l.int("M").unwrap_or(1);
    let simd = f.simd;
    if simd <= 0 || c % simd != 0 {
        bail!("layer {}: SIMD={simd} must divide IFMChannels={c}", l.name);
    }
    if ifm[0] == 1 || ifm[1] == 1 {
        bail!("layer {}: 1D sliding windows are not modelled", l.name);
    }
    let (kh, kw) = (k[0], k[1]);
    let (w, sh, sw, dh, dw) = (ifm[1], s[0], s[1], dil[0], dil[1]);
    let mmv_out = if f.parallel_window { m * kh * kw } else { 1 };
    let parallel = mmv_out > 1 || (kh == 1 && kw == 1);
    if parallel && !depthwise && !(kh == 1 && kw == 1) && simd != c {
        bail!(
            "layer {}: parallel_window needs SIMD = IFMChannels for a non-depthwise window",
            l.name
        );
    }
    let cf = c / simd;
    let bits = l.dtype("inputDataType")?.bits as i64;
    let (cycles, depth) = if parallel {
        let cyc = ifm[0] * ifm[1] * cf + 2;
        let depth = ((kh - 1) * dh * w + (kw - 1) * dw) * cf + 2;
        (cyc, depth)
    } else {
        let buf_min = ((kh - 1) * dh * w + (kw - 1) * dw + 1) * cf;
        let write = ofm[1] * kw * kh * cf;
        let read = sw * w * cf;
        let mut maxc = write.max(read);
        if depthwise {
            maxc += ofm[1] * (sw - 1) * (cf - 1);
        }
        let mut cyc = buf_min + ofm[0] * maxc;
        if depthwise {
            cyc += (sh - 1) * w * cf;
        }
        let depth = buf_min + 0.max((sw - 1 - kh * kw) * cf) + 0.max(((sh - 1) * w - kh * kw) * cf);
        (cyc, depth)
    };
    let width = simd * bits;
    let ram_style = l.str_attr("ram_style");
    let (mem_depth, count) = if parallel {
        let kernel_w = (kw - 1) * dw + 1;
        ((w - kernel_w) + w * (dh - 1), kh - 1)
    } else {
        (depth, 1)
    };
    let bram = if ram_style == "block" || ram_style == "auto" {
        swg_bram(mem_depth, width) * count
    } else {
        0
    };
    let uram = if ram_style == "ultra" {
        ((mem_depth + 4095) / 4096) * ((width + 71) / 72) * count
    } else {
        0
    };
    let lut = 300
        + if ram_style == "distributed" {
            width * ((depth + 37) / 38)
        } else {
            0
        };
    Ok(Cost {
        cycles: cycles as u64,
        res: Res {
            lut: lut as f64,
            ff: 0.0,
            bram18: bram as f64,
            uram: uram as f64,
            dsp: 0.0,
        },
        out_stream_bits: (simd * bits * mmv_out) as u64,
        modelled: true,
    })
}

fn ram_width_for_depth(depth: i64) -> i64 {
    match depth {
        d if d <= 512 => 36,
        d if d <= 1024 => 18,
        d if d <= 2048 => 9,
        d if d <= 4096 => 4,
        d if d <= 8192 => 2,
        _ => 1,
    }
}

fn swg_bram(depth: i64, width: i64) -> i64 {
    let ram_w = ram_width_for_depth(depth);
    let casc_d = (depth + 16383) / 16384;
    let casc_w = (width + ram_w - 1) / ram_w;
    let mut savings = 0;
    if depth > 16384 {
        let rw = ram_width_for_depth(depth % 16384);
        savings = casc_w - (width + rw - 1) / rw;
    }
    casc_d * casc_w - savings
}
