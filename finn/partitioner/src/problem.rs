//! What the partitioner solves and what a solution is: the units and their edges, the
//! devices and their order, the objective; the placement of every unit; why none exists.
//! Shared by the exact special-case algorithm (`chain`) and the MIP (`mip`).

use serde::Serialize;

use crate::devices::Device;
use crate::folding::{Unit, UnitEdge};
use crate::resources::NUM_RES;
use crate::topology::Layout;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum Objective {
    /// Minimise the highest utilisation of any resource on any device.
    Balanced,
    /// Minimise the bits per frame that cross devices.
    MinCut,
    /// Maximise end-to-end frames per second, choosing each layer's folding.
    Throughput,
}

pub struct Problem<'a> {
    pub units: &'a [Unit],
    pub edges: &'a [UnitEdge],
    pub devices: &'a [Device],
    pub layout: &'a Layout,
    pub objective: Objective,
    /// Resources that are budgeted (FINN has no FF estimate, so FF is off by default).
    pub considered: [bool; NUM_RES],
    pub time_limit_s: f64,
    pub layer_names: &'a [String],
    /// Skip the exact special-case algorithm (for cross-checking it).
    pub force_mip: bool,
    /// Per device, each SLR's budget for layers (`slr::caps_per_device`); empty: whole
    /// cards only. The exact chain algorithms keep every card segment splittable into SLR
    /// runs; the MIP budgets whole cards (`slr::place` refuses what does not split).
    pub slr_caps: &'a [Vec<crate::resources::Res>],
    /// The SLRs those budgets are of (their names for errors).
    pub slrs: &'a [Vec<crate::slr::SlrSpec>],
}

#[derive(Clone, Debug)]
pub struct Placement {
    /// Per unit: (device index, candidate index).
    pub assign: Vec<(usize, usize)>,
    pub objective: f64,
    pub best_bound: f64,
    pub optimal: bool,
    pub solve_seconds: f64,
    /// "mip" (CBC) or "chain" (the exact special-case algorithm of `chain.rs`).
    pub method: &'static str,
}

/// Why no placement exists, in the user's terms.
#[derive(Debug)]
pub struct Infeasible {
    pub message: String,
}

impl std::fmt::Display for Infeasible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}
impl std::error::Error for Infeasible {}
