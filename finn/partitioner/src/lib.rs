//! Partitioning of FINN dataflow graphs across FPGAs.
//!
//! Input: FINN's HW graph with per-layer estimates (`finn/flow/export_estimates.py`),
//! device budgets and the topology. A MIP (CBC through `good_lp`) places every layer
//! on a device, contiguous along the dataflow graph, within per-device resource
//! bounds and port limits, and (for the throughput objective) picks each layer's
//! folding together with its device.

// Index loops over the parallel per-device / per-resource arrays read clearer than zips.
#![allow(clippy::needless_range_loop)]

pub mod chain;
pub mod cost;
pub mod devices;
pub mod estimates;
pub mod folding;
pub mod mip;
pub mod plan;
pub mod problem;
pub mod replica_plan;
pub mod replicas;
pub mod resources;
pub mod slr;
pub mod topology;
pub mod widths;

use anyhow::{bail, Result};

pub use problem::Objective;
pub use replicas::Replicas;

#[derive(Clone, Debug)]
pub struct Options {
    pub objective: Objective,
    pub time_limit_s: f64,
    /// Resources to budget, in [`resources::RES_NAMES`] order.
    pub considered: [bool; resources::NUM_RES],
    /// Folding candidates kept per unit for the throughput objective.
    pub max_candidates: usize,
    pub fpga_part: String,
    /// Copies of the pipeline (throughput objective): None or `Count(1)` gives the
    /// single-copy plan of the MIP; otherwise `replicas::solve` with resource-type choices.
    pub replicas: Option<Replicas>,
    /// Each device's SLRs (`slr::load` of the devices JSON); empty: no SLR placement.
    pub slrs: Vec<Vec<slr::SlrSpec>>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            objective: Objective::Balanced,
            time_limit_s: 60.0,
            // FINN's analytic model has no FF estimate, so budgeting FF would be vacuous.
            considered: [true, false, true, true, true],
            max_candidates: 24,
            fpga_part: "xcu280-fsvh2892-2L-e".into(),
            replicas: None,
            slrs: Vec::new(),
        }
    }
}

/// Also solve with the MIP where the exact chain algorithm would apply (tests compare both).
pub fn partition_with_mip(
    est: &estimates::Estimates,
    devs: &[devices::Device],
    topo: &topology::Topology,
    opts: &Options,
) -> Result<plan::Plan> {
    partition_impl(est, devs, topo, opts, true)
}

pub fn partition(
    est: &estimates::Estimates,
    devs: &[devices::Device],
    topo: &topology::Topology,
    opts: &Options,
) -> Result<plan::Plan> {
    partition_impl(est, devs, topo, opts, false)
}

fn partition_impl(
    est: &estimates::Estimates,
    devs: &[devices::Device],
    topo: &topology::Topology,
    opts: &Options,
    force_mip: bool,
) -> Result<plan::Plan> {
    if let Some(want) = opts.replicas.filter(|r| *r != Replicas::Count(1)) {
        return partition_replicas(est, devs, topo, opts, want);
    }
    let layout = topo.layout(devs)?;
    let choose = opts.objective == Objective::Throughput;
    let (units, edges, unit_of) =
        folding::build(est, choose, false, &opts.fpga_part, opts.max_candidates)?;
    let names: Vec<String> = est.layers.iter().map(|l| l.name.clone()).collect();
    let slr_caps = slr::caps_per_device(devs, &opts.slrs);
    let problem = problem::Problem {
        units: &units,
        edges: &edges,
        devices: devs,
        layout: &layout,
        objective: opts.objective,
        considered: opts.considered,
        time_limit_s: opts.time_limit_s,
        layer_names: &names,
        force_mip,
        slr_caps: &slr_caps,
        slrs: &opts.slrs,
    };
    let mut placement = place(&problem)?;
    if choose {
        plan::trim_foldings(&units, devs, &mut placement);
    }
    let folded = (units, edges, unit_of);
    let inputs = plan_inputs(est, &folded, devs, topo, opts)?;
    let mut plan = plan::build(&inputs, &placement);
    slr::place(&mut plan, est, devs, &opts.slrs, opts.considered)?;
    Ok(plan)
}

/// What `plan::build` reads: the estimates, the units (with their edges and each layer's
/// unit) the placement was made over, and the options the plan records.
fn plan_inputs<'a>(
    est: &'a estimates::Estimates,
    (units, edges, unit_of): &'a (Vec<folding::Unit>, Vec<folding::UnitEdge>, Vec<usize>),
    devs: &'a [devices::Device],
    topo: &topology::Topology,
    opts: &'a Options,
) -> Result<plan::Inputs<'a>> {
    Ok(plan::Inputs {
        est,
        units,
        edges,
        unit_of,
        devices: devs,
        topology: serde_json::to_value(topo)?,
        objective: opts.objective,
        fpga_part: &opts.fpga_part,
    })
}

/// The exact algorithm where the special case applies (`chain`), else the MIP.
fn place(p: &problem::Problem) -> Result<problem::Placement> {
    let start = std::time::Instant::now();
    match chain::applies(p).filter(|_| !p.force_mip) {
        Some(order) => match chain::solve(p, &order) {
            Some(mut pl) => {
                pl.solve_seconds = start.elapsed().as_secs_f64();
                Ok(pl)
            }
            None if p.slr_caps.is_empty() => Err(mip::diagnose(p).into()),
            None => Err(slr::diagnose(p)),
        },
        None => mip::solve(p),
    }
}

/// Several copies of the pipeline (`replicas::solve`); the plan's layers, cuts and `fps`
/// describe copy 0, `replicas` every copy, the devices' use every copy on them.
fn partition_replicas(
    est: &estimates::Estimates,
    devs: &[devices::Device],
    topo: &topology::Topology,
    opts: &Options,
    want: Replicas,
) -> Result<plan::Plan> {
    if opts.objective != Objective::Throughput {
        bail!("replicas need the throughput objective (--objective throughput)");
    }
    let layout = topo.layout(devs)?;
    let (units, edges, unit_of) = folding::build(est, true, true, &opts.fpga_part, usize::MAX)?;
    let order: Vec<usize> = match &layout {
        topology::Layout::Ordered(orders) => orders[0].clone(),
        topology::Layout::General { .. } => Vec::new(),
    };
    let sol = replicas::solve(&units, &edges, devs, &order, opts.considered, want)?;
    let mut assign = vec![(0, 0); units.len()];
    for seg in &sol.copies[0] {
        for u in seg.start..seg.end {
            assign[u] = (seg.device, sol.choice[u]);
        }
    }
    let period_us = sol.period_cycles as f64 / devs[0].clk_mhz;
    let placement = problem::Placement {
        assign,
        objective: period_us,
        best_bound: period_us,
        optimal: false,
        solve_seconds: sol.seconds,
        method: "replicas",
    };
    let folded = (units, edges, unit_of);
    let inputs = plan_inputs(est, &folded, devs, topo, opts)?;
    let mut plan = plan::build(&inputs, &placement);
    replica_plan::attach(&mut plan, &inputs, &sol, topo);
    Ok(plan)
}
