//! The mixed-integer program: place every unit (with one of its foldings) on one
//! device so that each device holds a contiguous piece of the dataflow graph, every
//! cross-device stream runs over a link of the topology, and every device stays
//! within its resource bounds.

use std::sync::Mutex;
use std::time::Instant;

static CBC_LOCK: Mutex<()> = Mutex::new(());

use crate::folding::Unit;
pub use crate::problem::{Infeasible, Objective, Placement, Problem};
use crate::resources::{NUM_RES, RES_NAMES};
use crate::topology::Layout;
use anyhow::{bail, Result};
use good_lp::solvers::coin_cbc::coin_cbc;
use good_lp::{
    constraint, variable, Constraint, Expression, ProblemVariables, ResolutionError, Solution,
    SolutionStatus, SolverModel, Variable, WithTimeLimit,
};

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

/// Solves `p` as a MIP for every device order of the layout (one for chains, one per start
/// for rings of unequal devices) and keeps the best; an infeasible problem is explained in
/// the user's terms.
pub fn solve(p: &Problem) -> Result<Placement> {
    let start = Instant::now();
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

/// The MIP while it is built: its variables, its constraints, and the placement
/// indicators y[u][c][d] (unit u with folding c on device d).
struct Builder {
    vars: ProblemVariables,
    cons: Vec<Constraint>,
    v: Vars,
}

impl Builder {
    /// The indicators, and every unit placed exactly once.
    fn new(p: &Problem) -> Builder {
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
        let cons = (0..p.units.len())
            .map(|u| {
                let all: Expression = (0..nd).map(|d| v.x(u, d)).sum();
                constraint!(all == 1)
            })
            .collect();
        Builder { vars, cons, v }
    }

    /// Resource bounds per device (with slack when `relax`); with `balance`, every
    /// fraction of a device's resource is at most the returned variable t. Returns
    /// (t, the sum of the slacks scaled by each resource's total).
    fn resource_bounds(
        &mut self,
        p: &Problem,
        relax: bool,
        balance: bool,
    ) -> (Variable, Expression) {
        let t = self.vars.add(variable().min(0.0));
        let mut slack_sum = Expression::from(0.0);
        for (d, dev) in p.devices.iter().enumerate() {
            for r in (0..NUM_RES).filter(|&r| p.considered[r]) {
                let mut use_expr = Expression::from(0.0);
                for (u, unit) in p.units.iter().enumerate() {
                    for (c, cand) in unit.candidates.iter().enumerate() {
                        let a = cand.res.get(r);
                        if a != 0.0 {
                            use_expr += a * self.v.y[u][c][d];
                        }
                    }
                }
                let total = dev.total.get(r).max(1.0);
                let floor = dev.floor.get(r);
                if relax {
                    let s = self.vars.add(variable().min(0.0));
                    slack_sum += s * (1.0 / total);
                    self.cons
                        .push(constraint!(use_expr.clone() - s <= dev.cap.get(r)));
                    let s2 = self.vars.add(variable().min(0.0));
                    slack_sum += s2 * (1.0 / total);
                    if floor > 0.0 {
                        self.cons.push(constraint!(use_expr.clone() + s2 >= floor));
                    }
                } else {
                    self.cons
                        .push(constraint!(use_expr.clone() <= dev.cap.get(r)));
                    if floor > 0.0 {
                        self.cons.push(constraint!(use_expr.clone() >= floor));
                    }
                }
                if balance {
                    self.cons.push(constraint!(use_expr * (1.0 / total) <= t));
                }
            }
        }
        (t, slack_sum)
    }

    /// Contiguity along a device order, one stream per cut; returns the bits per frame
    /// that cross devices.
    ///
    /// Prefix formulation: z[u][k] = 1 when unit u sits at position <= k of the order.
    /// Monotone in k, and along every edge, which is what makes each device's share
    /// contiguous; sparse and with a tight LP relaxation.
    fn ordered(&mut self, p: &Problem, order: &[usize]) -> Expression {
        let nd = p.devices.len();
        let last = order.len() - 1;
        let z: Vec<Vec<Option<Variable>>> = (0..p.units.len())
            .map(|_| {
                (0..order.len())
                    .map(|k| (k < last).then(|| self.vars.add(variable().binary())))
                    .collect()
            })
            .collect();
        let zk = |u: usize, k: usize| -> Expression {
            match z[u][k] {
                Some(var) => var.into(),
                None => Expression::from(1.0),
            }
        };
        let (cons, v) = (&mut self.cons, &self.v);
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
        let mut cut_bits = Expression::from(0.0);
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
        cut_bits
    }

    /// Contiguity on a general device graph: streams only where links are (`mult` per
    /// device pair), an acyclic device-level graph, and on a switch (`dynamic`) at most
    /// `ports` partners per device; returns the bits per frame that cross devices.
    fn general(&mut self, p: &Problem, mult: &[Vec<u32>], dynamic: bool) -> Expression {
        let nd = p.devices.len();
        let mut used = vec![vec![None; nd]; nd];
        for a in 0..nd {
            for b in 0..nd {
                if a != b && mult[a][b] > 0 {
                    used[a][b] = Some(self.vars.add(variable().binary()));
                }
            }
        }
        self.cons.push(constraint!(self.v.x(0, 0) == 1));
        let mut streams: Vec<Vec<Expression>> = vec![vec![Expression::from(0.0); nd]; nd];
        let mut cut_bits = Expression::from(0.0);
        for e in p.edges {
            for a in 0..nd {
                for b in (0..nd).filter(|&b| b != a) {
                    let (from, to) = (self.v.x(e.from, a), self.v.x(e.to, b));
                    match used[a][b] {
                        None => self.cons.push(constraint!(from + to <= 1)),
                        Some(ub) => {
                            let c = self.vars.add(variable().min(0.0).max(1.0));
                            self.cons.push(constraint!(c >= from + to - 1));
                            self.cons.push(constraint!(ub >= c));
                            streams[a][b] += c;
                            cut_bits += (e.bits_per_frame as f64) * c;
                        }
                    }
                }
            }
        }
        // Device order variables keep the device-level graph acyclic, which is what makes
        // each device's share of the dataflow graph contiguous.
        let ord: Vec<Variable> = (0..nd)
            .map(|_| self.vars.add(variable().min(0.0).max(nd as f64)))
            .collect();
        let big = nd as f64 + 1.0;
        for a in 0..nd {
            for b in 0..nd {
                if let Some(ub) = used[a][b] {
                    self.cons
                        .push(constraint!(streams[a][b].clone() <= mult[a][b] as f64));
                    self.cons
                        .push(constraint!(ord[b] >= ord[a] + 1.0 - big * (1.0 - ub)));
                }
            }
        }
        if dynamic {
            self.switch_ports(p, &used);
        }
        cut_bits
    }

    /// On a switch each device connects to at most `ports` partners (a link serves both
    /// directions of a pair).
    fn switch_ports(&mut self, p: &Problem, used: &[Vec<Option<Variable>>]) {
        let nd = p.devices.len();
        let mut link_vars: Vec<Vec<Option<Variable>>> = vec![vec![None; nd]; nd];
        for a in 0..nd {
            for b in (a + 1)..nd {
                if let (Some(ab), Some(ba)) = (used[a][b], used[b][a]) {
                    let lk = self.vars.add(variable().binary());
                    self.cons.push(constraint!(lk >= ab));
                    self.cons.push(constraint!(lk >= ba));
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
            self.cons.push(constraint!(n_links <= dev.ports as f64));
        }
    }

    /// Throughput: every unit's cycles at its device's clock bound the frame period tau
    /// (at most `tau_max` in the balancing stage); returns tau.
    fn frame_period_bound(&mut self, p: &Problem, stage: Stage) -> Variable {
        let tau = self.vars.add(variable().min(0.0));
        if p.objective != Objective::Throughput {
            return tau;
        }
        for (u, unit) in p.units.iter().enumerate() {
            let mut per: Expression = Expression::from(0.0);
            for (c, cand) in unit.candidates.iter().enumerate() {
                for (d, dev) in p.devices.iter().enumerate() {
                    per += (cand.cycles as f64 / dev.clk_mhz) * self.v.y[u][c][d];
                }
            }
            self.cons.push(constraint!(per <= tau));
        }
        if let Stage::Balance { tau_max } = stage {
            self.cons.push(constraint!(tau <= tau_max));
        }
        tau
    }
}

/// Builds and solves one MIP. In the `Relax` stage resource bounds get slack variables
/// whose sum is minimised: used to find which bound makes the problem infeasible.
fn solve_once(p: &Problem, order: Option<&Vec<usize>>, stage: Stage) -> Result<Placement> {
    let relax = stage == Stage::Relax;
    let balance = p.objective == Objective::Balanced || matches!(stage, Stage::Balance { .. });
    let mut b = Builder::new(p);
    let (t, slack_sum) = b.resource_bounds(p, relax, balance);
    let cut_bits = match (order, p.layout) {
        (Some(order), _) => b.ordered(p, order),
        (None, Layout::General { mult, dynamic }) => b.general(p, mult, *dynamic),
        (None, Layout::Ordered(_)) => unreachable!("an ordered layout is solved per order"),
    };
    let tau = b.frame_period_bound(p, stage);
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
    run_cbc(p, b, objective)
}

/// Solves the built model with CBC and reads the placement off the indicators.
fn run_cbc(p: &Problem, b: Builder, objective: Expression) -> Result<Placement> {
    let mut model = b.vars.minimise(objective).using(coin_cbc);
    model.set_parameter("log", "0");
    // The tie-breaks of the objective are small: stop only at a proven optimum.
    model.set_parameter("allowableGap", "1e-9");
    model.set_parameter("ratioGap", "0");
    let mut model = model.with_time_limit(p.time_limit_s);
    for c in b.cons {
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
    let nd = p.devices.len();
    let mut assign = Vec::with_capacity(p.units.len());
    for (u, unit) in p.units.iter().enumerate() {
        // The largest indicator is the choice (CBC may return values like 0.9999999).
        let mut found = None;
        let mut best = 0.5;
        for c in 0..unit.candidates.len() {
            for d in 0..nd {
                let val = sol.value(b.v.y[u][c][d]);
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
pub fn diagnose(p: &Problem) -> Infeasible {
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
            // the cards by name: with one card, the refusal must say which card is too small
            let names: Vec<&str> = p.devices.iter().map(|d| d.name.as_str()).collect();
            return Infeasible {
                message: format!(
                    "infeasible: the network needs at least {need:.0} {} but all {} devices together ({}) allow {have:.0}; \
                     add devices or raise max_util",
                    RES_NAMES[r],
                    p.devices.len(),
                    names.join(", ")
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
