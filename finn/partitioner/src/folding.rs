//! Placement units and their folding candidates.
//!
//! A unit is what the MIP and the exact chain algorithm place: usually one layer, but a
//! sliding-window generator (ConvolutionInputGenerator) is fused with the layer it feeds
//! when that is
//! - a VVAU: FINN's VVAU reads its input in a different order whenever the generator
//!   feeding it is not in the same model, so a cut between the two gives wrong results
//!   in FINN's own execution of the partition chain; the pair must never be cut;
//! - a Pool fed by a depthwise generator: FINN requires the generator's SIMD to equal
//!   the consumer's PE (SetFolding does the same).

use std::collections::HashMap;

use anyhow::{bail, Result};

use crate::cost::{self, Compute, Cost, Fold, Kind, MemStyle};
use crate::estimates::Estimates;
use crate::resources::{Res, NUM_RES};

#[derive(Clone, Debug)]
pub struct Candidate {
    /// (layer index, folding) for every member of the unit.
    pub folds: Vec<(usize, Fold)>,
    pub cycles: u64,
    pub res: Res,
    /// Per member layer: output stream width with this folding.
    pub out_stream_bits: Vec<u64>,
}

#[derive(Clone, Debug)]
pub struct Unit {
    pub layers: Vec<usize>,
    pub candidates: Vec<Candidate>,
    /// Index of the candidate that equals the exported folding.
    pub current: usize,
}

/// A dataflow edge between units, with the bits one frame moves across it.
#[derive(Clone, Debug)]
pub struct UnitEdge {
    pub from: usize,
    pub to: usize,
    pub from_layer: usize,
    pub to_layer: usize,
    pub bits_per_frame: u64,
}

pub fn divisors(n: i64) -> Vec<i64> {
    (1..=n.max(1)).filter(|d| n % d == 0).collect()
}

fn successors(est: &Estimates) -> Vec<Vec<usize>> {
    let idx = est.index();
    let mut succ = vec![Vec::new(); est.layers.len()];
    for (i, l) in est.layers.iter().enumerate() {
        for p in &l.preds {
            succ[idx[p.as_str()]].push(i);
        }
    }
    succ
}

/// Layer groups (one per unit), the edges between units, and each layer's unit.
pub type UnitGraph = (Vec<Vec<usize>>, Vec<UnitEdge>, Vec<usize>);

/// Group layers into units (SWG + VVAU, depthwise SWG + Pool fused) and list unit edges.
pub fn units(est: &Estimates) -> Result<UnitGraph> {
    let succ = successors(est);
    let mut unit_of = vec![usize::MAX; est.layers.len()];
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, l) in est.layers.iter().enumerate() {
        if unit_of[i] != usize::MAX {
            continue;
        }
        let mut members = vec![i];
        if cost::kind(&l.op_type) == Kind::Swg {
            let is_vvau =
                |j: usize| matches!(cost::kind(&est.layers[j].op_type), Kind::Vvau { .. });
            if succ[i].len() > 1 && succ[i].iter().any(|&j| is_vvau(j)) {
                // Never true of a graph FINN built (a stream has one consumer; it inserts
                // DuplicateStreams), and a unit of three would need its own foldings.
                bail!(
                    "layer {} ({}) feeds {} layers, among them a VVAU; a FINN stream has one \
                     consumer (insert DuplicateStreams before the fork)",
                    l.name,
                    l.op_type,
                    succ[i].len()
                );
            }
            let depthwise = l.attrs.get("depthwise").and_then(|v| v.as_i64()) == Some(1);
            let fuse = succ[i].len() == 1
                && (is_vvau(succ[i][0])
                    || (depthwise && est.layers[succ[i][0]].op_type.starts_with("Pool")));
            if fuse {
                members.push(succ[i][0]);
            }
        }
        for &m in &members {
            unit_of[m] = groups.len();
        }
        groups.push(members);
    }
    let idx = est.index();
    let mut edges = Vec::new();
    for (i, l) in est.layers.iter().enumerate() {
        for p in &l.preds {
            let j = idx[p.as_str()];
            if unit_of[i] != unit_of[j] {
                edges.push(UnitEdge {
                    from: unit_of[j],
                    to: unit_of[i],
                    from_layer: j,
                    to_layer: i,
                    bits_per_frame: est.layers[j].out_bits_per_frame,
                });
            }
        }
    }
    Ok((groups, edges, unit_of))
}

/// Foldings FINN accepts for one layer on its own.
fn layer_folds(est: &Estimates, i: usize) -> Result<Vec<Fold>> {
    let l = &est.layers[i];
    let cur = cost::current_fold(l);
    let f = Fold::new;
    Ok(match cost::kind(&l.op_type) {
        Kind::Mvau { .. } => {
            let mut v = Vec::new();
            for pe in divisors(l.int("MH")?) {
                for simd in divisors(l.int("MW")?) {
                    v.push(f(pe, simd, false));
                }
            }
            v
        }
        Kind::Swg => {
            let c = l.int("IFMChannels")?;
            let mut v: Vec<Fold> = divisors(c).into_iter().map(|s| f(1, s, false)).collect();
            // A non-depthwise window can emit whole windows per cycle only at full SIMD.
            v.push(f(1, c, true));
            v
        }
        Kind::Linear { par_attr } => {
            let ch = cost::linear_channels(l)?;
            divisors(ch)
                .into_iter()
                .map(|p| {
                    if par_attr == "SIMD" {
                        f(cur.pe, p, false)
                    } else {
                        f(p, cur.simd, false)
                    }
                })
                .collect()
        }
        Kind::Vvau { .. } | Kind::Other => vec![cur],
    })
}

/// Foldings of a fused (SWG, VVAU/Pool) pair: the SWG's SIMD follows the
/// consumer's PE, and VVAU SIMD > 1 needs the SWG's parallel window.
fn pair_folds(est: &Estimates, swg: usize, consumer: usize) -> Result<Vec<Vec<(usize, Fold)>>> {
    let c = &est.layers[consumer];
    let mut v = Vec::new();
    let (chans, kk) = if c.op_type.starts_with("Pool") {
        (c.int("Channels")?, 1)
    } else {
        let k = c.ints("Kernel")?;
        (c.int("Channels")?, k[0] * k[1])
    };
    for pe in divisors(chans) {
        for simd in divisors(kk) {
            let pw = simd > 1;
            v.push(vec![
                (swg, Fold::new(1, pe, pw)),
                (consumer, Fold::new(pe, simd, false)),
            ]);
        }
    }
    Ok(v)
}

fn price(est: &Estimates, folds: Vec<(usize, Fold)>, part: &str) -> Result<Candidate> {
    let mut cycles = 0;
    let mut res = Res::default();
    let mut widths = Vec::new();
    for &(i, f) in &folds {
        let c: Cost = cost::estimate(&est.layers[i], f, part)?;
        cycles = cycles.max(c.cycles);
        res = res.add(&c.res);
        widths.push(c.out_stream_bits);
    }
    Ok(Candidate {
        folds,
        cycles,
        res,
        out_stream_bits: widths,
    })
}

/// The exported folding with FINN's own reported figures (no re-estimation).
fn reported(est: &Estimates, layers: &[usize]) -> Candidate {
    let mut res = Res::default();
    let mut cycles = 0;
    for &i in layers {
        res = res.add(&est.layers[i].res);
        cycles = cycles.max(est.layers[i].cycles);
    }
    Candidate {
        folds: layers
            .iter()
            .map(|&i| (i, cost::current_fold(&est.layers[i])))
            .collect(),
        cycles,
        res,
        out_stream_bits: layers
            .iter()
            .map(|&i| est.layers[i].out_stream_bits)
            .collect(),
    }
}

/// Keep candidates no other candidate beats on cycles and every resource at once,
/// then at most `max_keep` of them spread over the cycle range.
fn pareto(mut c: Vec<Candidate>, max_keep: usize) -> Vec<Candidate> {
    c.sort_by(|a, b| {
        a.cycles
            .cmp(&b.cycles)
            .then(a.res.lut.total_cmp(&b.res.lut))
    });
    let mut keep: Vec<Candidate> = Vec::new();
    for cand in c {
        let dominated = keep
            .iter()
            .any(|k| k.cycles <= cand.cycles && k.res.dominated_by_or_eq(&cand.res));
        if !dominated {
            keep.push(cand);
        }
    }
    if keep.len() <= max_keep {
        return keep;
    }
    // Among equal-ish cycle counts keep the cheapest; sample geometrically in cycles.
    let weight = |r: &Res| (0..NUM_RES).map(|i| r.get(i)).sum::<f64>();
    let mut by_cycles: HashMap<u64, Candidate> = HashMap::new();
    for k in keep {
        let e = by_cycles.entry(k.cycles).or_insert_with(|| k.clone());
        if weight(&k.res) < weight(&e.res) {
            *e = k;
        }
    }
    let mut v: Vec<Candidate> = by_cycles.into_values().collect();
    v.sort_by_key(|k| k.cycles);
    if v.len() <= max_keep {
        return v;
    }
    let n = v.len();
    (0..max_keep)
        .map(|j| v[j * (n - 1) / (max_keep - 1)].clone())
        .collect()
}

/// Every resource-type variant of one layer's folding that FINN's estimate models: weights
/// in BRAM, URAM or LUTRAM (`ram_style`, only with `mem_mode = internal_decoupled`; LUTRAM
/// only for HLS layers, whose LUT model counts it: FINN models no LUTs for RTL MVAU/VVAU),
/// multipliers in DSPs or LUTs (`resType`, HLS layers only: RTL ones always use DSPs).
fn type_variants(est: &Estimates, i: usize, f: Fold) -> Vec<Fold> {
    let l = &est.layers[i];
    let rtl = match cost::kind(&l.op_type) {
        Kind::Mvau { rtl } | Kind::Vvau { rtl } => rtl,
        _ => return vec![f],
    };
    let mut mems = vec![MemStyle::Exported];
    if l.str_attr("mem_mode") == "internal_decoupled" {
        mems.extend([MemStyle::Block, MemStyle::Ultra]);
        if !rtl {
            mems.push(MemStyle::Distributed);
        }
    }
    let mut computes = vec![Compute::Exported];
    if !rtl {
        computes.extend([Compute::Dsp, Compute::Lut]);
    }
    let mut v = Vec::new();
    for &mem in &mems {
        for &compute in &computes {
            v.push(Fold { mem, compute, ..f });
        }
    }
    v
}

/// Each combination of folds with every resource-type variant of each member layer.
fn with_types(est: &Estimates, combos: Vec<Vec<(usize, Fold)>>) -> Vec<Vec<(usize, Fold)>> {
    let mut out = Vec::new();
    for folds in combos {
        let mut acc: Vec<Vec<(usize, Fold)>> = vec![Vec::new()];
        for &(i, f) in &folds {
            let vars = type_variants(est, i, f);
            acc = acc
                .into_iter()
                .flat_map(|pre| {
                    vars.iter().map(move |&v| {
                        let mut p = pre.clone();
                        p.push((i, v));
                        p
                    })
                })
                .collect();
        }
        out.extend(acc);
    }
    out
}

/// Build units; with `choose_folding` every unit gets its legal foldings priced by
/// FINN's formulas, otherwise the single exported folding with FINN's figures; with
/// `choose_types` also every resource type of each folding ([`type_variants`]).
pub fn build(
    est: &Estimates,
    choose_folding: bool,
    choose_types: bool,
    part: &str,
    max_cands: usize,
) -> Result<(Vec<Unit>, Vec<UnitEdge>, Vec<usize>)> {
    let (groups, edges, unit_of) = units(est)?;
    let mut out = Vec::new();
    for layers in groups {
        let base = reported(est, &layers);
        if !choose_folding {
            out.push(Unit {
                layers,
                candidates: vec![base],
                current: 0,
            });
            continue;
        }
        let combos: Vec<Vec<(usize, Fold)>> = if layers.len() == 2 {
            pair_folds(est, layers[0], layers[1])?
        } else {
            layer_folds(est, layers[0])?
                .into_iter()
                .map(|f| vec![(layers[0], f)])
                .collect()
        };
        let combos = if choose_types {
            with_types(est, combos)
        } else {
            combos
        };
        let mut cands = Vec::new();
        for folds in combos {
            // A folding FINN's model rejects (e.g. a 1D window) is simply not offered.
            if let Ok(c) = price(est, folds, part) {
                cands.push(c);
            }
        }
        let mut cands = pareto(cands, max_cands);
        let current = cands.iter().position(|c| c.folds == base.folds);
        let current = match current {
            Some(i) => i,
            None => {
                // Keep the exported folding available so the result is never worse.
                match price(est, base.folds.clone(), part) {
                    Ok(c) => cands.push(c),
                    Err(_) => cands.push(base.clone()),
                }
                cands.len() - 1
            }
        };
        out.push(Unit {
            layers,
            candidates: cands,
            current,
        });
    }
    Ok((out, edges, unit_of))
}
