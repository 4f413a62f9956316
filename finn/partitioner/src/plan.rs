//! The result: which layer runs where with which folding, what crosses each cut, and
//! what every device uses and achieves; plus the per-device folding configs.

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::cost::{self, Fold, Kind};
use crate::devices::Device;
use crate::estimates::Estimates;
use crate::folding::{Unit, UnitEdge};
use crate::problem::{Objective, Placement};
use crate::replica_plan::{BindingPlan, ReplicaPlan};
use crate::resources::{Res, NUM_RES, RES_NAMES};
use crate::widths;

/// One hop over an AuroraFlow link: the paper's measured minimum latency (64 B), read from
/// paper/figures.toml [link], its one copy.
pub fn link_hop_us() -> f64 {
    paper::figures().link.latency_us
}

#[derive(Debug, Serialize)]
pub struct Plan {
    pub model: String,
    pub objective: Objective,
    pub topology: Value,
    pub solver: SolverReport,
    /// Frames per second of one copy of the pipeline.
    pub fps: f64,
    /// Replica plans only (the `replicas` option; absent otherwise): every copy's FPS
    /// summed, what bounds one more copy, and each copy's segments and cuts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fps_total: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub binding: Option<BindingPlan>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<Vec<ReplicaPlan>>,
    /// FINN's estimate (`estimated_latency_ns` of dataflow_performance.py): the sum of every
    /// layer's full cycles along the longest path, as if no layer overlapped another. Not a
    /// pipelined latency: host/perf_model models and simulates that.
    pub finn_no_overlap_latency_ms: f64,
    pub bottleneck: String,
    pub devices: Vec<DevicePlan>,
    pub cuts: Vec<Cut>,
    pub layers: Vec<LayerPlan>,
}

#[derive(Debug, Serialize)]
pub struct SolverReport {
    pub solver: &'static str,
    pub method: &'static str,
    /// The solver's wall-clock time. Kept out of the JSON so that the same inputs give a
    /// byte-identical plan (the build caches and compares it); `finn-partition` prints it
    /// on stderr and writes it to `--timing-out`.
    #[serde(skip)]
    pub seconds: f64,
    pub optimal: bool,
    pub objective: f64,
    pub best_bound: f64,
    pub gap: f64,
    pub units: usize,
    pub candidates: usize,
}

#[derive(Debug, Serialize)]
pub struct DevicePlan {
    pub name: String,
    pub clk_mhz: f64,
    pub layers: Vec<String>,
    pub resources: Res,
    pub reserved_link_kernels: Res,
    /// Fraction of the device's total, dataflow layers plus reserved link kernels.
    pub utilization: BTreeMap<&'static str, f64>,
    pub max_cycles: u64,
    pub fps: f64,
    /// Where the card's layers sit among its SLRs (`slr.rs`); absent when the devices
    /// JSON gives no SLRs, so such plans stay as they were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slrs: Option<SlrPlan>,
}

/// A card's layers over its SLRs: contiguous runs in chain order, each run one SLR.
#[derive(Debug, Serialize)]
pub struct SlrPlan {
    /// SLR boundaries the card's streams cross (an SLR0 -> SLR2 stream counts 2), the
    /// streams to and from the AuroraFlow CUs on their QSFP's SLR included.
    pub crossings: u32,
    pub runs: Vec<SlrRun>,
}

/// One SLR's share of a card: the layers `first_layer..=last_layer` in plan order.
#[derive(Debug, Serialize)]
pub struct SlrRun {
    pub slr: String,
    pub first_layer: String,
    pub last_layer: String,
    pub layers: usize,
    pub resources: Res,
    /// The run's layers plus the link kernels this SLR holds, as a fraction of the SLR.
    pub utilization: BTreeMap<&'static str, f64>,
}

/// What crosses one cut; written here and read back by the deployment compiler
/// (deploy/tool), so the defaults let that reader take plans older than a field.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct Cut {
    pub from_layer: String,
    pub to_layer: String,
    pub from_device: String,
    pub to_device: String,
    pub stream_bits: u64,
    /// One frame of the cut's tensor in bits (0 in plans older than this field).
    #[serde(default)]
    pub bits_per_frame: u64,
    #[serde(default)]
    pub gbps: f64,
}

#[derive(Debug, Serialize)]
pub struct LayerPlan {
    pub name: String,
    pub op_type: String,
    pub device: String,
    /// FINN node attributes: PE/SIMD/parallel_window, and `ram_style` / `resType` where
    /// the plan chose the weights' memory or the multipliers' resource.
    pub folding: BTreeMap<&'static str, Value>,
    pub cycles: u64,
    pub res: Res,
    /// AXI4-Stream widths with the planned folding: what the deployment's link step gives
    /// the partition kernels (network input/output, cut streams).
    pub in_stream_bits: u64,
    pub out_stream_bits: u64,
    /// One frame in bits on the layer's input / output (folding-independent): with the
    /// stream widths, the words per frame, from which the deployment sizes the DMAs at the
    /// network's ends (finn-plus 1.6.1 InsertIODMA: gcd(stream bits x words, 512)).
    pub in_bits_per_frame: u64,
    pub out_bits_per_frame: u64,
    /// "finn_report": FINN's figures for this folding; "formula": FINN's formulas
    /// evaluated here; "finn_report_fixed": FINN has no formula for this op, so its
    /// reported resources for the exported folding are kept.
    pub res_from: &'static str,
    /// The SLR of its card the layer sits in (`slr.rs`; absent without SLR data).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slr: Option<String>,
}

impl DevicePlan {
    /// Utilisation of the dataflow layers alone (without reserved link kernels).
    pub fn resources_util(&self, res: &str) -> f64 {
        let i = RES_NAMES.iter().position(|r| *r == res).unwrap_or(0);
        let total = self.utilization.get(RES_NAMES[i]).copied().unwrap_or(0.0);
        let reserved = self.reserved_link_kernels.get(i);
        let used = self.resources.get(i);
        if used + reserved == 0.0 {
            0.0
        } else {
            total * used / (used + reserved)
        }
    }
}

/// The node attributes a folding sets, as FINN's folding config spells them (the resource
/// types only where the plan chose one).
pub fn folding_attrs(op_type: &str, f: Fold) -> BTreeMap<&'static str, Value> {
    let mut m = BTreeMap::new();
    match cost::kind(op_type) {
        Kind::Mvau { .. } | Kind::Vvau { .. } => {
            m.insert("PE", json!(f.pe));
            m.insert("SIMD", json!(f.simd));
            if let Some(style) = f.mem.attr() {
                m.insert("ram_style", json!(style));
            }
            if let Some(t) = f.compute.attr() {
                m.insert("resType", json!(t));
            }
        }
        Kind::Swg => {
            m.insert("SIMD", json!(f.simd));
            m.insert("parallel_window", json!(f.parallel_window as i64));
        }
        Kind::Linear { par_attr: "SIMD" } => {
            m.insert("SIMD", json!(f.simd));
        }
        Kind::Linear { .. } => {
            m.insert("PE", json!(f.pe));
        }
        Kind::Other => {}
    }
    m
}

/// For the throughput objective: the solver only bounds the slowest unit, so give
/// every other unit the cheapest folding that is no slower than the frame period and
/// uses no more of any resource than the solver's pick.
pub fn trim_foldings(units: &[Unit], devices: &[Device], pl: &mut Placement) {
    let period = pl
        .assign
        .iter()
        .enumerate()
        .map(|(u, &(d, c))| units[u].candidates[c].cycles as f64 / devices[d].clk_mhz)
        .fold(0.0, f64::max);
    for (u, a) in pl.assign.iter_mut().enumerate() {
        let (d, c) = *a;
        let chosen = &units[u].candidates[c];
        let dev = &devices[d];
        let weight = |r: &Res| {
            (0..NUM_RES)
                .map(|i| r.get(i) / dev.total.get(i).max(1.0))
                .sum::<f64>()
        };
        // Cheapest first; among equally cheap, the least parallel (narrowest streams).
        let mut best = c;
        for (k, cand) in units[u].candidates.iter().enumerate() {
            let b = &units[u].candidates[best];
            let better = weight(&cand.res) < weight(&b.res)
                || (weight(&cand.res) == weight(&b.res) && cand.cycles > b.cycles);
            if cand.cycles as f64 / dev.clk_mhz <= period * (1.0 + 1e-9)
                && cand.res.dominated_by_or_eq(&chosen.res)
                && better
            {
                best = k;
            }
        }
        a.1 = best;
    }
}

pub struct Inputs<'a> {
    pub est: &'a Estimates,
    pub units: &'a [Unit],
    pub edges: &'a [UnitEdge],
    pub unit_of: &'a [usize],
    pub devices: &'a [Device],
    pub topology: Value,
    pub objective: Objective,
    pub fpga_part: &'a str,
}

/// Each layer's placement: device, folding, and the figures that folding gives it.
struct PlacedLayers {
    dev: Vec<usize>,
    fold: Vec<Fold>,
    cycles: Vec<u64>,
    res: Vec<Res>,
    /// Width of the layer's output stream, bits.
    width: Vec<u64>,
    /// Where cycles and res come from (`LayerPlan::res_from`).
    src: Vec<&'static str>,
}

pub fn build(inp: &Inputs, pl: &Placement) -> Plan {
    let nl = inp.est.layers.len();
    let placed = place_layers(inp, pl);
    let devices = device_plans(inp, &placed);
    let (fps, bottleneck) = bottleneck(inp, &placed);
    let idx = inp.est.index();
    let cuts = cuts(inp, &placed, &idx, fps);
    let latency_us = no_overlap_latency_us(inp, &placed, &idx);
    Plan {
        model: inp.est.model.clone(),
        objective: inp.objective,
        topology: inp.topology.clone(),
        solver: solver_report(inp, pl),
        fps,
        fps_total: None,
        binding: None,
        replicas: None,
        finn_no_overlap_latency_ms: latency_us / 1000.0,
        bottleneck,
        devices,
        cuts,
        layers: (0..nl)
            .map(|i| LayerPlan {
                name: inp.est.layers[i].name.clone(),
                op_type: inp.est.layers[i].op_type.clone(),
                device: inp.devices[placed.dev[i]].name.clone(),
                folding: folding_attrs(&inp.est.layers[i].op_type, placed.fold[i]),
                cycles: placed.cycles[i],
                res: placed.res[i],
                in_stream_bits: in_width(inp, &placed, &idx, i),
                out_stream_bits: placed.width[i],
                in_bits_per_frame: inp.est.layers[i].in_bits_per_frame,
                out_bits_per_frame: inp.est.layers[i].out_bits_per_frame,
                res_from: placed.src[i],
                slr: None,
            })
            .collect(),
    }
}

/// Every layer of the placement's chosen candidates: its device and folding, and its
/// cycles and resources (FINN's own for the exported folding, ours otherwise).
fn place_layers(inp: &Inputs, pl: &Placement) -> PlacedLayers {
    let nl = inp.est.layers.len();
    let mut p = PlacedLayers {
        dev: vec![0usize; nl],
        fold: vec![Fold::new(1, 1, false); nl],
        cycles: vec![0u64; nl],
        res: vec![Res::default(); nl],
        width: vec![0u64; nl],
        src: vec!["finn_report"; nl],
    };
    for (u, &(d, c)) in pl.assign.iter().enumerate() {
        let cand = &inp.units[u].candidates[c];
        for (k, &(i, f)) in cand.folds.iter().enumerate() {
            p.dev[i] = d;
            p.fold[i] = f;
            p.width[i] = cand.out_stream_bits[k];
            let l = &inp.est.layers[i];
            // Per-layer figures: FINN's own for the exported folding, ours otherwise.
            if f == cost::current_fold(l) {
                p.cycles[i] = l.cycles;
                p.res[i] = l.res;
            } else if let Ok(cst) = cost::estimate(l, f, inp.fpga_part) {
                p.cycles[i] = cst.cycles;
                p.res[i] = cst.res;
                p.src[i] = if cst.modelled {
                    "formula"
                } else {
                    "finn_report_fixed"
                };
            }
        }
    }
    p
}

/// What each device runs, uses (its link kernels' reserve included when it runs anything)
/// and achieves.
fn device_plans(inp: &Inputs, placed: &PlacedLayers) -> Vec<DevicePlan> {
    let nl = inp.est.layers.len();
    let mut devices = Vec::new();
    for (d, dev) in inp.devices.iter().enumerate() {
        let mine: Vec<usize> = (0..nl).filter(|&i| placed.dev[i] == d).collect();
        let res = mine
            .iter()
            .fold(Res::default(), |a, &i| a.add(&placed.res[i]));
        let max_cycles = mine.iter().map(|&i| placed.cycles[i]).max().unwrap_or(0);
        let mut util = BTreeMap::new();
        for (r, name) in RES_NAMES.iter().enumerate() {
            let used = if mine.is_empty() {
                0.0
            } else {
                res.get(r) + dev.reserved.get(r)
            };
            util.insert(*name, used / dev.total.get(r).max(1.0));
        }
        devices.push(DevicePlan {
            name: dev.name.clone(),
            clk_mhz: dev.clk_mhz,
            layers: mine
                .iter()
                .map(|&i| inp.est.layers[i].name.clone())
                .collect(),
            resources: res,
            reserved_link_kernels: if mine.is_empty() {
                Res::default()
            } else {
                dev.reserved
            },
            utilization: util,
            max_cycles,
            fps: if max_cycles > 0 {
                dev.clk_mhz * 1e6 / max_cycles as f64
            } else {
                0.0
            },
            slrs: None,
        });
    }
    devices
}

/// The pipeline's frames per second and the layer that limits it (the first of the
/// slowest).
fn bottleneck(inp: &Inputs, placed: &PlacedLayers) -> (f64, String) {
    let (mut fps, mut bottleneck) = (f64::INFINITY, String::new());
    for i in 0..inp.est.layers.len() {
        let f = inp.devices[placed.dev[i]].clk_mhz * 1e6 / placed.cycles[i].max(1) as f64;
        if f < fps {
            fps = f;
            bottleneck = inp.est.layers[i].name.clone();
        }
    }
    (fps, bottleneck)
}

/// Every stream between layers on different devices, with its bandwidth at `fps`.
fn cuts(inp: &Inputs, placed: &PlacedLayers, idx: &HashMap<&str, usize>, fps: f64) -> Vec<Cut> {
    let mut cuts = Vec::new();
    for (i, l) in inp.est.layers.iter().enumerate() {
        for p in &l.preds {
            let j = idx[p.as_str()];
            if placed.dev[i] != placed.dev[j] {
                cuts.push(Cut {
                    from_layer: p.clone(),
                    to_layer: l.name.clone(),
                    from_device: inp.devices[placed.dev[j]].name.clone(),
                    to_device: inp.devices[placed.dev[i]].name.clone(),
                    stream_bits: placed.width[j],
                    bits_per_frame: inp.est.layers[j].out_bits_per_frame,
                    gbps: inp.est.layers[j].out_bits_per_frame as f64 * fps / 1e9,
                });
            }
        }
    }
    cuts
}

/// FINN's latency model: the sum of cycles along the longest path (no overlap), here at
/// each layer's own clock, plus one link hop per device crossing; microseconds.
fn no_overlap_latency_us(inp: &Inputs, placed: &PlacedLayers, idx: &HashMap<&str, usize>) -> f64 {
    let mut longest = vec![0.0f64; inp.est.layers.len()];
    for (i, l) in inp.est.layers.iter().enumerate() {
        let own = placed.cycles[i] as f64 / inp.devices[placed.dev[i]].clk_mhz;
        let before = l
            .preds
            .iter()
            .map(|p| {
                let j = idx[p.as_str()];
                longest[j]
                    + if placed.dev[j] != placed.dev[i] {
                        link_hop_us()
                    } else {
                        0.0
                    }
            })
            .fold(0.0, f64::max);
        longest[i] = before + own;
    }
    longest.iter().cloned().fold(0.0, f64::max)
}

/// The width of layer `i`'s input stream, bits.
fn in_width(inp: &Inputs, placed: &PlacedLayers, idx: &HashMap<&str, usize>, i: usize) -> u64 {
    let l = &inp.est.layers[i];
    match l.preds.first() {
        // a stream's width is its producer's
        Some(p) => placed.width[idx[p.as_str()]],
        // a graph input: FINN's own input width for the layer's folding (an MVAU's is
        // SIMD-wide while its output is PE-wide, so it cannot follow the output side)
        None => widths::in_stream_bits(l, placed.fold[i]),
    }
}

fn solver_report(inp: &Inputs, pl: &Placement) -> SolverReport {
    let gap = if pl.objective.abs() > 1e-12 {
        ((pl.objective - pl.best_bound) / pl.objective.abs()).max(0.0)
    } else {
        0.0
    };
    SolverReport {
        solver: if pl.method == "replicas" {
            "period search (replicas.rs), no MIP"
        } else {
            "CBC (good_lp coin_cbc)"
        },
        method: pl.method,
        seconds: pl.solve_seconds,
        optimal: pl.optimal,
        objective: pl.objective,
        best_bound: pl.best_bound,
        gap,
        units: inp.units.len(),
        candidates: inp.units.iter().map(|u| u.candidates.len()).sum(),
    }
}

/// FINN folding config (qonnx ApplyConfig format) for the layers of one device (in a
/// replica plan: the layers of every copy on it, which share one folding).
pub fn folding_config(plan: &Plan, device: &str) -> Value {
    let on_device = |name: &str| match &plan.replicas {
        None => false,
        Some(copies) => copies.iter().any(|r| {
            r.segments
                .iter()
                .any(|s| s.device == device && s.layers.iter().any(|l| l == name))
        }),
    };
    let mut m = serde_json::Map::new();
    m.insert("Defaults".into(), json!({}));
    for l in plan
        .layers
        .iter()
        .filter(|l| l.device == device || on_device(&l.name))
    {
        if !l.folding.is_empty() {
            m.insert(l.name.clone(), json!(l.folding));
        }
    }
    Value::Object(m)
}
