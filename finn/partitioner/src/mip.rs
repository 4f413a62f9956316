//! The mixed-integer program: place every unit (with one of its foldings) on one
//! device so that each device holds a contiguous piece of the dataflow graph, every
//! cross-device stream runs over a link of the topology, and every device stays
//! within its resource bounds.

use std::sync::Mutex;
use std::time::Instant;

static CBC_LOCK: Mutex<()> = Mutex::new(());

use anyhow::{bail, Result};
use good_lp::solvers::coin_cbc::coin_cbc;
use good_lp::{
    constraint, variable, Expression, ProblemVariables, ResolutionError, Solution, SolutionStatus,
    SolverModel, Variable, WithTimeLimit,
};
use serde::Serialize;

use crate::devices::Device;
use crate::folding::{Unit, UnitEdge};
use crate::resources::{NUM_RES, RES_NAMES};
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

/// What one MIP solve minimises.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Stage {
    /// The problem's own objective.
    Primary,
    /// Slack on every resource bound (to explain infeasibility).
    Relax,
    /// Throughput, second pass: the most balanced utilisation among the placements whose
    /// frame period is at most `tau_max` (the first pass's optimum), then the least cut.
    Balance { tau_max: f64 },
}

struct Vars {
    /// y[u][c][d]
    y: Vec<Vec<Vec<Variable>>>,
}

impl Vars {
    fn x(&self, u: usize, d: usize) -> Expression {
        self.y[u].iter().map(|cd| cd[d]).sum()
    }
}

/// Solve for every device order of the layout (one for chains, one per start for
/// rings of unequal devices) and keep the best.
pub fn solve(p: &Problem) -> Result<Placement> {
    let start = Instant::now();
    if let Some(order) = crate::chain::applies(p).filter(|_| !p.force_mip) {
        return match crate::chain::solve(p, &order) {
            Some(mut pl) => {
                pl.solve_seconds = start.elapsed().as_secs_f64();
                Ok(pl)
            }
            None => Err(diagnose(p).into()),
        };
    }
    let result = solve_stage(p, Stage::Primary).and_then(|first| {
        if p.objective != Objective::Throughput {
            return Ok(first);
        }
        // Lexicographic: best FPS first, then the most balanced split among the plans
        // with that FPS (a single-stage weighted sum would pile layers onto one device
        // whenever that costs nothing in FPS), then the least cut bandwidth.
        let tau = frame_period(p, &first.assign);
        let second = solve_stage(
            p,
            Stage::Balance {
                tau_max: tau * (1.0 + 1e-6) + 1e-9,
            },
        )?;
        Ok(Placement {
            optimal: first.optimal && second.optimal,
            ..second
        })
    });
    match result {
        Ok(mut pl) => {
            pl.solve_seconds = start.elapsed().as_secs_f64();
            Ok(pl)
        }
        Err(e)
            if e.downcast_ref::<ResolutionError>()
                .is_some_and(|r| matches!(r, ResolutionError::Infeasible)) =>
        {
            Err(diagnose(p).into())
        }
        Err(e) => Err(e),
    }
}

/// The frame period (µs) of a placement: its slowest unit at its device's clock.
fn frame_period(p: &Problem, assign: &[(usize, usize)]) -> f64 {
    assign
        .iter()
        .enumerate()
        .map(|(u, &(d, c))| p.units[u].candidates[c].cycles as f64 / p.devices[d].clk_mhz)
        .fold(0.0, f64::max)
}

/// One stage over every device order of the layout; the best order wins.
fn solve_stage(p: &Problem, stage: Stage) -> Result<Placement> {
    match p.layout {
        Layout::Ordered(orders) => {
            let mut best: Option<Placement> = None;
            let mut last_err = None;
            for order in orders {
                match solve_once(p, Some(order), stage) {
                    Ok(pl) => {
                        if best.as_ref().is_none_or(|b| pl.objective < b.objective) {
                            best = Some(pl);
                        }
                    }
                    Err(e) => last_err = Some(e),
                }
            }
            match (best, last_err) {
                (Some(b), _) => Ok(b),
                (None, Some(e)) => Err(e),
                (None, None) => bail!("the topology has no device order"),
            }
        }
        Layout::General { .. } => solve_once(p, None, stage),
    }
}

/// Build and solve one MIP. With `relax`, resource bounds get slack variables whose
/// sum is minimised: used to find which bound makes the problem infeasible.
fn solve_once(p: &Problem, order: Option<&Vec<usize>>, stage: Stage) -> Result<Placement> {
    let relax = stage == Stage::Relax;
    let balance = p.objective == Objective::Balanced || matches!(stage, Stage::Balance { .. });
    let nd = p.devices.len();
    let mut vars = ProblemVariables::new();
    let y: Vec<Vec<Vec<Variable>>> = p
        .units
        .iter()
        .map(|u| {
            u.candidates
                .iter()
                .map(|_| (0..nd).map(|_| vars.add(variable().binary())).collect())
                .collect()
        })
        .collect();
    let v = Vars { y };
    let mut cons = Vec::new();

    for u in 0..p.units.len() {
        let all: Expression = (0..nd).map(|d| v.x(u, d)).sum();
        cons.push(constraint!(all == 1));
    }

    // Resource bounds per device.
    let t = vars.add(variable().min(0.0));
    let mut slack_sum = Expression::from(0.0);
    for (d, dev) in p.devices.iter().enumerate() {
        for r in 0..NUM_RES {
            if !p.considered[r] {
                continue;
            }
            let mut use_expr = Expression::from(0.0);
            for (u, unit) in p.units.iter().enumerate() {
                for (c, cand) in unit.candidates.iter().enumerate() {
                    let a = cand.res.get(r);
                    if a != 0.0 {
                        use_expr += a * v.y[u][c][d];
                    }
                }
            }
            let total = dev.total.get(r).max(1.0);
            if relax {
                let s = vars.add(variable().min(0.0));
                slack_sum += s * (1.0 / total);
                cons.push(constraint!(use_expr.clone() - s <= dev.cap.get(r)));
                let s2 = vars.add(variable().min(0.0));
                slack_sum += s2 * (1.0 / total);
                if dev.floor.get(r) > 0.0 {
                    cons.push(constraint!(use_expr.clone() + s2 >= dev.floor.get(r)));
                }
            } else {
                cons.push(constraint!(use_expr.clone() <= dev.cap.get(r)));
                if dev.floor.get(r) > 0.0 {
                    cons.push(constraint!(use_expr.clone() >= dev.floor.get(r)));
                }
            }
            if balance {
                cons.push(constraint!(use_expr * (1.0 / total) <= t));
            }
        }
    }

    // Contiguity and links.
    let mut cut_bits = Expression::from(0.0);
    match order {
        Some(order) => {
            // Prefix formulation: z[u][k] = 1 when unit u sits at position <= k of the
            // order. Monotone in k, and along every edge, which is what makes each
            // device's share contiguous; sparse and with a tight LP relaxation.
            let last = order.len() - 1;
            let z: Vec<Vec<Option<Variable>>> = (0..p.units.len())
                .map(|_| {
                    (0..order.len())
                        .map(|k| (k < last).then(|| vars.add(variable().binary())))
                        .collect()
                })
                .collect();
            let zk = |u: usize, k: usize| -> Expression {
                match z[u][k] {
                    Some(var) => var.into(),
                    None => Expression::from(1.0),
                }
            };
            for u in 0..p.units.len() {
                for k in 0..order.len() {
                    let below = if k == 0 {
                        Expression::from(0.0)
                    } else {
                        zk(u, k - 1)
                    };
                    cons.push(constraint!(v.x(u, order[k]) == zk(u, k) - below.clone()));
                    if k > 0 {
                        cons.push(constraint!(below <= zk(u, k)));
                    }
                }
            }
            for d in (0..nd).filter(|d| !order.contains(d)) {
                for u in 0..p.units.len() {
                    cons.push(constraint!(v.x(u, d) == 0));
                }
            }
            // The network's input enters on the first device of the order.
            cons.push(constraint!(zk(0, 0) == 1));
            for k in 0..last {
                let mut crossing = Expression::from(0.0);
                for e in p.edges {
                    cons.push(constraint!(zk(e.to, k) <= zk(e.from, k)));
                    cons.push(constraint!(zk(e.to, k + 1) >= zk(e.from, k)));
                    crossing += zk(e.from, k) - zk(e.to, k);
                    cut_bits += (e.bits_per_frame as f64) * (zk(e.from, k) - zk(e.to, k));
                }
                // A link carries one stream per direction: one edge per cut.
                cons.push(constraint!(crossing <= 1));
            }
        }
        None => {
            let Layout::General { mult, dynamic } = p.layout else {
                unreachable!()
            };
            let mut used = vec![vec![None; nd]; nd];
            for a in 0..nd {
                for b in 0..nd {
                    if a != b && mult[a][b] > 0 {
                        used[a][b] = Some(vars.add(variable().binary()));
                    }
                }
            }
            cons.push(constraint!(v.x(0, 0) == 1));
            let mut streams: Vec<Vec<Expression>> = vec![vec![Expression::from(0.0); nd]; nd];
            for e in p.edges {
                for a in 0..nd {
                    for b in 0..nd {
                        if a == b {
                            continue;
                        }
                        match used[a][b] {
                            None => cons.push(constraint!(v.x(e.from, a) + v.x(e.to, b) <= 1)),
                            Some(ub) => {
                                let c = vars.add(variable().min(0.0).max(1.0));
                                cons.push(constraint!(c >= v.x(e.from, a) + v.x(e.to, b) - 1));
                                cons.push(constraint!(ub >= c));
                                streams[a][b] += c;
                                cut_bits += (e.bits_per_frame as f64) * c;
                            }
                        }
                    }
                }
            }
            // Device order variables keep the device-level graph acyclic, which is
            // what makes each device's share of the dataflow graph contiguous.
            let ord: Vec<Variable> = (0..nd)
                .map(|_| vars.add(variable().min(0.0).max(nd as f64)))
                .collect();
            let big = nd as f64 + 1.0;
            for a in 0..nd {
                for b in 0..nd {
                    if let Some(ub) = used[a][b] {
                        cons.push(constraint!(streams[a][b].clone() <= mult[a][b] as f64));
                        cons.push(constraint!(ord[b] >= ord[a] + 1.0 - big * (1.0 - ub)));
                    }
                }
            }
            if *dynamic {
                // Switch: each device connects to at most `ports` partners.
                let mut link_vars: Vec<Vec<Option<Variable>>> = vec![vec![None; nd]; nd];
                for a in 0..nd {
                    for b in (a + 1)..nd {
                        if let (Some(ab), Some(ba)) = (used[a][b], used[b][a]) {
                            let lk = vars.add(variable().binary());
                            cons.push(constraint!(lk >= ab));
                            cons.push(constraint!(lk >= ba));
                            link_vars[a][b] = Some(lk);
                            link_vars[b][a] = Some(lk);
                        }
                    }
                }
                for (a, dev) in p.devices.iter().enumerate() {
                    let n_links: Expression = link_vars[a]
                        .iter()
                        .flatten()
                        .map(|&l| Expression::from(l))
                        .sum();
                    cons.push(constraint!(n_links <= dev.ports as f64));
                }
            }
        }
    }

    // Throughput: every unit's cycles at its device's clock bound the frame period.
    let tau = vars.add(variable().min(0.0));
    if p.objective == Objective::Throughput {
        for (u, unit) in p.units.iter().enumerate() {
            let mut per: Expression = Expression::from(0.0);
            for (c, cand) in unit.candidates.iter().enumerate() {
                for (d, dev) in p.devices.iter().enumerate() {
                    per += (cand.cycles as f64 / dev.clk_mhz) * v.y[u][c][d];
                }
            }
            cons.push(constraint!(per <= tau));
        }
        if let Stage::Balance { tau_max } = stage {
            cons.push(constraint!(tau <= tau_max));
        }
    }

    let total_bits: f64 = p
        .edges
        .iter()
        .map(|e| e.bits_per_frame as f64)
        .sum::<f64>()
        .max(1.0);
    let objective: Expression = if relax {
        slack_sum
    } else {
        match p.objective {
            // Ties are broken towards fewer bits crossing devices.
            _ if balance => t + cut_bits * (1e-3 / total_bits),
            Objective::MinCut => cut_bits * (1.0 / total_bits),
            Objective::Throughput => tau + cut_bits * (1e-3 / total_bits),
            Objective::Balanced => unreachable!("balanced solves take the branch above"),
        }
    };

    let mut model = vars.minimise(objective.clone()).using(coin_cbc);
    model.set_parameter("log", "0");
    // The tie-breaks above are small: stop only at a proven optimum.
    model.set_parameter("allowableGap", "1e-9");
    model.set_parameter("ratioGap", "0");
    let mut model = model.with_time_limit(p.time_limit_s);
    for c in cons {
        model.add_constraint(c);
    }
    // CBC keeps global state and is not thread-safe: one solve at a time per process.
    let sol = {
        let _guard = CBC_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        model.solve()?
    };
    let optimal = matches!(sol.status(), SolutionStatus::Optimal);
    let timed_out = matches!(sol.status(), SolutionStatus::TimeLimit);
    let raw = sol.model();
    let (obj, bound) = (raw.obj_value(), raw.best_possible_value());
    let mut assign = Vec::with_capacity(p.units.len());
    for (u, unit) in p.units.iter().enumerate() {
        // The largest indicator is the choice (CBC may return values like 0.9999999).
        let mut found = None;
        let mut best = 0.5;
        for c in 0..unit.candidates.len() {
            for d in 0..nd {
                let val = sol.value(v.y[u][c][d]);
                if val > best {
                    best = val;
                    found = Some((d, c));
                }
            }
        }
        match found {
            Some(f) => assign.push(f),
            None if timed_out => bail!(
                "the solver stopped (time limit {} s) before finding a placement",
                p.time_limit_s
            ),
            // CBC sometimes ends without flagging infeasibility and without a solution.
            None => return Err(ResolutionError::Infeasible.into()),
        }
    }
    Ok(Placement {
        assign,
        objective: obj,
        best_bound: bound,
        optimal,
        solve_seconds: 0.0,
        method: "mip",
    })
}

/// Explain an infeasible problem: first a unit too big for any device, then the
/// resource whose total exceeds all budgets, else the bound a relaxed solve violates.
fn diagnose(p: &Problem) -> Infeasible {
    for r in 0..NUM_RES {
        if !p.considered[r] {
            continue;
        }
        for unit in p.units {
            let need = unit
                .candidates
                .iter()
                .map(|c| c.res.get(r))
                .fold(f64::INFINITY, f64::min);
            if p.devices.iter().all(|d| need > d.cap.get(r)) {
                let best = p
                    .devices
                    .iter()
                    .max_by(|a, b| a.cap.get(r).total_cmp(&b.cap.get(r)))
                    .unwrap();
                return Infeasible {
                    message: format!(
                        "infeasible: {} needs {need:.0} {} but device {} allows at most {:.0} (its largest budget); \
                         raise max_util or use a larger device",
                        unit_name(p, unit),
                        RES_NAMES[r],
                        best.name,
                        best.cap.get(r)
                    ),
                };
            }
        }
        let need: f64 = p
            .units
            .iter()
            .map(|u| {
                u.candidates
                    .iter()
                    .map(|c| c.res.get(r))
                    .fold(f64::INFINITY, f64::min)
            })
            .sum();
        let have: f64 = p.devices.iter().map(|d| d.cap.get(r)).sum();
        if need > have {
            return Infeasible {
                message: format!(
                    "infeasible: the network needs at least {need:.0} {} but all {} devices together allow {have:.0}; \
                     add devices or raise max_util",
                    RES_NAMES[r],
                    p.devices.len()
                ),
            };
        }
    }
    let order = match p.layout {
        Layout::Ordered(o) => o.first(),
        Layout::General { .. } => None,
    };
    match solve_once(p, order, Stage::Relax) {
        Ok(pl) => {
            let mut worst: Option<(f64, usize, usize, f64, f64)> = None;
            for (d, dev) in p.devices.iter().enumerate() {
                for r in 0..NUM_RES {
                    if !p.considered[r] {
                        continue;
                    }
                    let used: f64 = pl
                        .assign
                        .iter()
                        .enumerate()
                        .filter(|(_, &(dd, _))| dd == d)
                        .map(|(u, &(_, c))| p.units[u].candidates[c].res.get(r))
                        .sum();
                    let over = (used - dev.cap.get(r)).max(dev.floor.get(r) - used)
                        / dev.total.get(r).max(1.0);
                    if over > 1e-9 && worst.is_none_or(|w| over > w.0) {
                        worst = Some((
                            over,
                            d,
                            r,
                            used,
                            if used > dev.cap.get(r) {
                                dev.cap.get(r)
                            } else {
                                dev.floor.get(r)
                            },
                        ));
                    }
                }
            }
            match worst {
                Some((_, d, r, used, bound)) => Infeasible {
                    message: format!(
                        "infeasible: the binding resource is {} on device {}: the best contiguous placement needs {used:.0} \
                         against a bound of {bound:.0}; relax that device's {} bounds, add devices or change the topology",
                        RES_NAMES[r], p.devices[d].name, RES_NAMES[r]
                    ),
                },
                None => Infeasible {
                    message: "infeasible: no placement satisfies the topology's links and ports".into(),
                },
            }
        }
        Err(_) => Infeasible {
            message:
                "infeasible: no contiguous placement fits the topology's links and port limits"
                    .into(),
        },
    }
}

fn unit_name(p: &Problem, unit: &Unit) -> String {
    let names: Vec<&str> = unit
        .layers
        .iter()
        .map(|&i| p.layer_names[i].as_str())
        .collect();
    format!("layer {}", names.join(" + "))
}
