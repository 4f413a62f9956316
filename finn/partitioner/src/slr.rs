//! SLR placement inside each card: after the cards are chosen, every card's layers are
//! split, in chain order, into runs of one SLR each, under per-SLR budgets, with as few
//! SLR crossings as the split allows.
//!
//! Why layers and runs: finn-plus 1.6.1's Vitis flow floorplans per node (the `slr` node
//! attribute, `finn/transformation/fpgadataflow/floorplan.py`): a node whose SLR differs
//! from its predecessor's starts a new partition, i.e. a new kernel, and `VitisLink`
//! (`vitis_build.py`) writes `slr=<cu>:SLR<n>` for every partition with an SLR. A run here
//! is such a partition. Our card builds ONE stitched FINN kernel, so the deployment binds
//! that CU with `slr=` when its card is one run, and leaves a multi-run CU to v++ (UG1393
//! 2021.2 "Assigning Compute Units to SLRs": a kernel too large for one SLR must not be
//! assigned one); splitting the kernel per run is not done (docs/limits.md).
//!
//! Budgets: an SLR holds `max_util` of its own resources (the card's fractions, from the
//! device's cap) less the AuroraFlow kernels whose QSFP sits in it; a layer bigger than
//! every SLR is refused naming the card, the layer, each SLR and the resource it lacks,
//! even when the whole card's budget admits it.

use std::collections::{BTreeMap, HashMap};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::devices::Device;
use crate::estimates::Estimates;
use crate::plan::{Plan, SlrPlan, SlrRun};
use crate::resources::{Res, NUM_RES, RES_NAMES};

/// One SLR of a card, as devices.json gives it (deploy-tool writes it from the platform
/// file's `[slr.*]` tables and its QSFP ports' `slr`).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
pub struct SlrSpec {
    pub name: String,
    pub total: Res,
    /// The QSFP ports in this SLR: their AuroraFlow CUs sit here.
    #[serde(default)]
    pub qsfp_ports: Vec<u32>,
}

#[derive(Deserialize)]
struct DeviceSlrs {
    #[serde(default)]
    slrs: Vec<SlrSpec>,
}

#[derive(Deserialize)]
struct DevicesFile {
    devices: Vec<DeviceSlrs>,
}

/// Each device's SLRs from a devices JSON, in device order (empty where it gives none).
pub fn from_devices_json(v: &serde_json::Value) -> Result<Vec<Vec<SlrSpec>>> {
    let f: DevicesFile = serde_json::from_value(v.clone())
        .context("the devices' `slrs` must be [{name, total: {LUT, ...}, qsfp_ports}]")?;
    Ok(f.devices.into_iter().map(|d| d.slrs).collect())
}

pub fn load(path: &std::path::Path) -> Result<Vec<Vec<SlrSpec>>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let v: serde_json::Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a devices JSON", path.display()))?;
    from_devices_json(&v).with_context(|| path.display().to_string())
}

/// Each device's SLR budgets (`caps`), empty for a device without SLRs or when none has.
pub fn caps_per_device(devs: &[Device], slrs: &[Vec<SlrSpec>]) -> Vec<Vec<Res>> {
    if slrs.len() != devs.len() {
        return Vec::new();
    }
    devs.iter().zip(slrs).map(|(d, s)| caps(d, s)).collect()
}

/// Whether a chain of units (`res` in order) splits into runs of one SLR each within the
/// budgets `caps` (no SLRs: yes). The exact chain algorithms (`chain.rs`) ask this of every
/// card segment, so they place around SLR budgets instead of only refusing afterwards.
pub fn splits(res: &[Res], caps: &[Res], considered: [bool; NUM_RES]) -> bool {
    caps.is_empty()
        || [true, false]
            .iter()
            .any(|&up| (0..caps.len()).any(|s| greedy(res, caps, s, up, considered).is_some()))
}

/// Each SLR's budget for dataflow layers on device `dev`.
fn caps(dev: &Device, slrs: &[SlrSpec]) -> Vec<Res> {
    let per_port = |r: usize| {
        if dev.ports == 0 {
            0.0
        } else {
            dev.reserved.get(r) / f64::from(dev.ports)
        }
    };
    slrs.iter()
        .map(|s| {
            let mut c = Res::default();
            for r in 0..NUM_RES {
                let total = dev.total.get(r);
                // the card's max_util: cap = total * max_util - reserved (devices.rs)
                let frac = if total > 0.0 {
                    (dev.cap.get(r) + dev.reserved.get(r)) / total
                } else {
                    0.0
                };
                let links = per_port(r) * s.qsfp_ports.len() as f64;
                c.set(r, (s.total.get(r) * frac - links).max(0.0));
            }
            c
        })
        .collect()
}

fn fits(used: &Res, cap: &Res, considered: [bool; NUM_RES]) -> bool {
    (0..NUM_RES).all(|r| !considered[r] || used.get(r) <= cap.get(r) + 1e-9)
}

/// Fill SLRs from `start`, stepping up or down one SLR when the next layer does not fit:
/// for a fixed SLR order the fewest runs (a longer run never hurts the rest).
fn greedy(
    res: &[Res],
    caps: &[Res],
    start: usize,
    up: bool,
    considered: [bool; NUM_RES],
) -> Option<Vec<usize>> {
    let (mut s, mut used, mut out) = (start, Res::default(), Vec::with_capacity(res.len()));
    for r in res {
        let next = used.add(r);
        if fits(&next, &caps[s], considered) {
            used = next;
        } else {
            s = if up { s + 1 } else { s.checked_sub(1)? };
            if s >= caps.len() || !fits(r, &caps[s], considered) {
                return None;
            }
            used = *r;
        }
        out.push(s);
    }
    Some(out)
}

/// SLR boundaries crossed by the card's streams with `slr_of` (this card's layer index ->
/// SLR index): between its own layers, and from / to a cut's AuroraFlow CU on the nearest
/// QSFP SLR `q` (a layer not in `slr_of` is on another card).
fn crossings(est: &Estimates, slr_of: &HashMap<usize, usize>, q: &[usize]) -> u32 {
    let idx = est.index();
    let to_link = |s: usize| q.iter().map(|&x| x.abs_diff(s)).min().unwrap_or(0);
    let mut n = 0;
    for (i, l) in est.layers.iter().enumerate() {
        for p in &l.preds {
            n += match (slr_of.get(&i), slr_of.get(&idx[p.as_str()])) {
                (Some(&a), Some(&b)) => a.abs_diff(b),
                (Some(&a), None) | (None, Some(&a)) => to_link(a),
                (None, None) => 0,
            };
        }
    }
    n as u32
}

/// Every card's SLR runs into the plan (`LayerPlan::slr`, `DevicePlan::slrs`); no-op when
/// no device gives SLRs.
pub fn place(
    plan: &mut Plan,
    est: &Estimates,
    devs: &[Device],
    slrs: &[Vec<SlrSpec>],
    considered: [bool; NUM_RES],
) -> Result<()> {
    if slrs.iter().all(Vec::is_empty) {
        return Ok(());
    }
    if slrs.len() != devs.len() {
        bail!(
            "SLRs are given for {} devices, but there are {}",
            slrs.len(),
            devs.len()
        );
    }
    for (d, dev) in devs.iter().enumerate() {
        let specs = &slrs[d];
        let mine: Vec<usize> = (0..plan.layers.len())
            .filter(|&i| plan.layers[i].device == dev.name)
            .collect();
        if specs.is_empty() || mine.is_empty() {
            continue;
        }
        let caps = caps(dev, specs);
        let res: Vec<Res> = mine.iter().map(|&i| plan.layers[i].res).collect();
        for (k, &i) in mine.iter().enumerate() {
            check_layer_fits(
                &dev.name,
                &plan.layers[i].name,
                &res[k],
                specs,
                &caps,
                considered,
            )?;
        }
        let q: Vec<usize> = (0..specs.len())
            .filter(|&s| !specs[s].qsfp_ports.is_empty())
            .collect();
        // (crossings, runs, assignment): the first of the fewest crossings, then runs
        let mut best: Option<(u32, usize, Vec<usize>)> = None;
        for up in [true, false] {
            for start in 0..specs.len() {
                let Some(a) = greedy(&res, &caps, start, up, considered) else {
                    continue;
                };
                let slr_of: HashMap<usize, usize> =
                    mine.iter().copied().zip(a.iter().copied()).collect();
                let c = crossings(est, &slr_of, &q);
                let runs = 1 + a.windows(2).filter(|w| w[0] != w[1]).count();
                if best.as_ref().is_none_or(|b| (c, runs) < (b.0, b.1)) {
                    best = Some((c, runs, a));
                }
            }
        }
        let Some((c, _, a)) = best else {
            bail!(
                "card {}: its layers {} .. {} fit the card's budget, but no split into \
                 contiguous runs of one SLR each keeps every SLR within its budget ({}); \
                 lower the card's share (max_util) so the partitioner moves layers to \
                 another card, or fold the largest layers less",
                dev.name,
                plan.layers[mine[0]].name,
                plan.layers[*mine.last().unwrap()].name,
                describe_caps(specs, &caps, considered)
            );
        };
        for (k, &i) in mine.iter().enumerate() {
            plan.layers[i].slr = Some(specs[a[k]].name.clone());
        }
        plan.devices[d].slrs = Some(SlrPlan {
            crossings: c,
            runs: runs(plan, dev, &mine, &a, specs),
        });
    }
    Ok(())
}

/// Why the exact chain algorithm found no placement under SLR budgets: a unit no SLR of
/// any card holds (named with the first card's SLRs), else the split itself.
pub fn diagnose(p: &crate::problem::Problem) -> anyhow::Error {
    for unit in p.units {
        let need = unit.candidates[0].res;
        let fits_somewhere = p
            .slr_caps
            .iter()
            .any(|caps| caps.iter().any(|c| fits(&need, c, p.considered)));
        if !fits_somewhere {
            let names: Vec<&str> = unit
                .layers
                .iter()
                .map(|&i| p.layer_names[i].as_str())
                .collect();
            let d = (0..p.devices.len())
                .find(|&d| !p.slr_caps[d].is_empty())
                .unwrap_or(0);
            let err = check_layer_fits(
                &p.devices[d].name,
                &names.join(" + "),
                &need,
                &p.slrs[d],
                &p.slr_caps[d],
                p.considered,
            );
            if let Err(e) = err {
                return e;
            }
        }
    }
    let whole = crate::problem::Problem {
        slr_caps: &[],
        slrs: &[],
        ..*p
    };
    let admits = crate::chain::applies(&whole)
        .and_then(|order| crate::chain::solve(&whole, &order))
        .is_some();
    if !admits {
        return crate::mip::diagnose(&whole).into();
    }
    anyhow::anyhow!(
        "the cards' whole budgets admit a placement, but none keeps every card's share in \
         contiguous runs of one SLR each within the SLRs' budgets (each SLR's max_util share, \
         less the link kernels on its QSFPs); add a card, or fold the largest layers less"
    )
}

fn check_layer_fits(
    card: &str,
    layer: &str,
    need: &Res,
    specs: &[SlrSpec],
    caps: &[Res],
    considered: [bool; NUM_RES],
) -> Result<()> {
    if caps.iter().any(|c| fits(need, c, considered)) {
        return Ok(());
    }
    let why: Vec<String> = specs
        .iter()
        .zip(caps)
        .map(|(s, c)| {
            let r = (0..NUM_RES)
                .find(|&r| considered[r] && need.get(r) > c.get(r) + 1e-9)
                .unwrap_or(0);
            format!(
                "{} holds {:.0} {} for layers, the layer needs {:.0}",
                s.name,
                c.get(r),
                RES_NAMES[r],
                need.get(r)
            )
        })
        .collect();
    bail!(
        "card {card}: layer {layer} fits in no SLR ({}); one layer is placed in one SLR \
         (the whole card's budget would admit it): fold it less, move its weights to \
         another memory (ram_style), or use a board with larger SLRs",
        why.join("; ")
    )
}

fn describe_caps(specs: &[SlrSpec], caps: &[Res], considered: [bool; NUM_RES]) -> String {
    specs
        .iter()
        .zip(caps)
        .map(|(s, c)| {
            let parts: Vec<String> = (0..NUM_RES)
                .filter(|&r| considered[r])
                .map(|r| format!("{} {:.0}", RES_NAMES[r], c.get(r)))
                .collect();
            format!("{}: {}", s.name, parts.join(", "))
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// The card's runs with what each SLR uses (its link kernels included).
fn runs(plan: &Plan, dev: &Device, mine: &[usize], a: &[usize], specs: &[SlrSpec]) -> Vec<SlrRun> {
    let per_port = |r: usize| {
        if dev.ports == 0 {
            0.0
        } else {
            dev.reserved.get(r) / f64::from(dev.ports)
        }
    };
    let mut out: Vec<SlrRun> = Vec::new();
    let mut k = 0;
    while k < mine.len() {
        let s = a[k];
        let start = k;
        let mut used = Res::default();
        while k < mine.len() && a[k] == s {
            used = used.add(&plan.layers[mine[k]].res);
            k += 1;
        }
        let spec = &specs[s];
        let utilization: BTreeMap<&'static str, f64> = RES_NAMES
            .iter()
            .enumerate()
            .map(|(r, name)| {
                let links = per_port(r) * spec.qsfp_ports.len() as f64;
                (*name, (used.get(r) + links) / spec.total.get(r).max(1.0))
            })
            .collect();
        out.push(SlrRun {
            slr: spec.name.clone(),
            first_layer: plan.layers[mine[start]].name.clone(),
            last_layer: plan.layers[mine[k - 1]].name.clone(),
            layers: k - start,
            resources: used,
            utilization,
        });
    }
    out
}
