//! Exact algorithms for the common special case: the unit graph is a single path,
//! each unit has one folding, the devices form an order, and there are no lower
//! bounds. Contiguous placements are then splits of a sequence, so
//! - balanced (min-max utilisation): bisection on the bound with greedy packing, which
//!   is exact because filling earlier devices as far as possible never hurts later ones;
//! - min cut: dynamic programming over (units placed, devices used).
//!
//! These scale to hundreds of layers on tens of devices in milliseconds, where the
//! MIP's relaxation is weak; the tests check them against the MIP on MobileNet.

use crate::devices::Device;
use crate::folding::{Unit, UnitEdge};
use crate::problem::{Objective, Placement, Problem};
use crate::resources::{Res, NUM_RES};
use crate::topology::Layout;

/// Whether `p` is the special case, and if so the device order to use.
pub fn applies(p: &Problem) -> Option<Vec<usize>> {
    let Layout::Ordered(orders) = p.layout else {
        return None;
    };
    if orders.len() != 1 || p.objective == Objective::Throughput {
        return None;
    }
    if p.units.iter().any(|u| u.candidates.len() != 1) {
        return None;
    }
    if p.devices
        .iter()
        .any(|d| (0..NUM_RES).any(|r| d.floor.get(r) > 0.0))
    {
        return None;
    }
    // A path 0 -> 1 -> ... -> n-1.
    let n = p.units.len();
    if p.edges.len() != n.saturating_sub(1) || p.edges.iter().any(|e| e.to != e.from + 1) {
        return None;
    }
    Some(orders[0].clone())
}

fn res(units: &[Unit], i: usize) -> Res {
    units[i].candidates[0].res
}

/// Whether units `a..b` on device `d` split into runs of one SLR each (`slr::splits`).
fn slr_ok(p: &Problem, d: usize, a: usize, b: usize) -> bool {
    match p.slr_caps.get(d) {
        None => true,
        Some(caps) => {
            let seg: Vec<Res> = (a..b).map(|i| res(p.units, i)).collect();
            crate::slr::splits(&seg, caps, p.considered)
        }
    }
}

/// Greedy packing under the utilisation bound `t`; None if the units do not fit.
fn pack(p: &Problem, order: &[usize], t: f64) -> Option<Vec<usize>> {
    let mut assign = Vec::with_capacity(p.units.len());
    let mut k = 0;
    let mut used = Res::default();
    let fits = |dev: &Device, u: &Res| {
        (0..NUM_RES).all(|r| {
            !p.considered[r]
                || (u.get(r) <= dev.cap.get(r) + 1e-9
                    && u.get(r) / dev.total.get(r).max(1.0) <= t + 1e-12)
        })
    };
    let mut start = 0;
    for i in 0..p.units.len() {
        let next = used.add(&res(p.units, i));
        if fits(&p.devices[order[k]], &next) && slr_ok(p, order[k], start, i + 1) {
            used = next;
        } else {
            k += 1;
            start = i;
            if k == order.len()
                || !fits(&p.devices[order[k]], &res(p.units, i))
                || !slr_ok(p, order[k], i, i + 1)
            {
                return None;
            }
            used = res(p.units, i);
        }
        assign.push(order[k]);
    }
    Some(assign)
}

fn max_util(p: &Problem, assign: &[usize]) -> f64 {
    let mut use_ = vec![Res::default(); p.devices.len()];
    for (i, &d) in assign.iter().enumerate() {
        use_[d] = use_[d].add(&res(p.units, i));
    }
    let mut m: f64 = 0.0;
    for (d, u) in use_.iter().enumerate() {
        for r in 0..NUM_RES {
            if p.considered[r] {
                m = m.max(u.get(r) / p.devices[d].total.get(r).max(1.0));
            }
        }
    }
    m
}

fn cut_bits(edges: &[UnitEdge], assign: &[usize]) -> u64 {
    edges
        .iter()
        .filter(|e| assign[e.from] != assign[e.to])
        .map(|e| e.bits_per_frame)
        .sum()
}

fn balanced(p: &Problem, order: &[usize]) -> Option<Placement> {
    let mut best = pack(p, order, 1.0)?;
    let (mut lo, mut hi) = (0.0, max_util(p, &best));
    for _ in 0..100 {
        if hi - lo < 1e-12 {
            break;
        }
        let mid = 0.5 * (lo + hi);
        match pack(p, order, mid) {
            Some(a) => {
                hi = max_util(p, &a);
                best = a;
            }
            None => lo = mid,
        }
    }
    let t = max_util(p, &best);
    Some(done(best, t, lo))
}

/// DP over (units 0..i placed, last device position k): least cut bits.
fn min_cut(p: &Problem, order: &[usize]) -> Option<Placement> {
    let n = p.units.len();
    let l = order.len();
    // prefix sums of resources
    let mut pre = vec![Res::default(); n + 1];
    for i in 0..n {
        pre[i + 1] = pre[i].add(&res(p.units, i));
    }
    let seg_fits = |a: usize, b: usize, d: usize| {
        (0..NUM_RES).all(|r| {
            !p.considered[r] || pre[b].get(r) - pre[a].get(r) <= p.devices[d].cap.get(r) + 1e-9
        }) && slr_ok(p, d, a, b)
    };
    const INF: u64 = u64::MAX;
    // cost[k][i]: units 0..i on positions 0..=k, the last segment ending at i on k.
    let mut cost = vec![vec![INF; n + 1]; l];
    let mut from = vec![vec![0usize; n + 1]; l];
    for i in 1..=n {
        if seg_fits(0, i, order[0]) {
            cost[0][i] = 0;
        }
    }
    for k in 1..l {
        for i in 1..=n {
            for j in 1..i {
                if cost[k - 1][j] == INF || !seg_fits(j, i, order[k]) {
                    continue;
                }
                let c = cost[k - 1][j] + p.edges[j - 1].bits_per_frame;
                if c < cost[k][i] {
                    cost[k][i] = c;
                    from[k][i] = j;
                }
            }
        }
    }
    let (k_best, _) = (0..l)
        .map(|k| (k, cost[k][n]))
        .filter(|&(_, c)| c != INF)
        .min_by_key(|&(_, c)| c)?;
    let mut assign = vec![0; n];
    let (mut k, mut i) = (k_best, n);
    loop {
        let j = if k == 0 { 0 } else { from[k][i] };
        for a in assign.iter_mut().take(i).skip(j) {
            *a = order[k];
        }
        if k == 0 {
            break;
        }
        i = j;
        k -= 1;
    }
    let bits = cut_bits(p.edges, &assign) as f64;
    Some(done(assign, bits, bits))
}

fn done(devs: Vec<usize>, objective: f64, bound: f64) -> Placement {
    Placement {
        assign: devs.into_iter().map(|d| (d, 0)).collect(),
        objective,
        best_bound: bound.min(objective),
        optimal: true,
        solve_seconds: 0.0,
        method: "chain",
    }
}

/// Solve the special case exactly; None when no placement fits the budgets.
pub fn solve(p: &Problem, order: &[usize]) -> Option<Placement> {
    match p.objective {
        Objective::Balanced => balanced(p, order),
        Objective::MinCut => min_cut(p, order),
        Objective::Throughput => None,
    }
}
