//! Replicas: several copies of the whole pipeline on the cards, all with one folding, each
//! copy whole on one card or cut along the device order.
//!
//! The search is over the frame period T. For each period a unit's candidates reach,
//! every unit takes its cheapest candidate no slower than T, then a local search
//! ([`improve`]) trades resources against each other (URAM for BRAM, DSPs for LUTs) to
//! lower the copy's largest share of a card. The copy is then packed ([`pack`]) and
//! scores copies × clock / T; the best period wins. Periods whose bound on the FPS
//! ([`copies_bound`]) cannot beat the best so far are skipped, so 8 cards take well under
//! a second.
//!
//! Packing: as many whole copies per card as its budgets hold, then further copies cut
//! along the device order through the room left, each greedy (a segment takes the
//! longest prefix of the rest of the copy that fits, backed off to a cut that carries one
//! stream). A link between two neighbours in the order carries at most one copy's stream
//! (two copies cut across the same pair of cards would need two cables). Packing
//! everything as one cut chain instead is tried too, and the one with more copies kept.

use std::str::FromStr;

use anyhow::{bail, Result};

use crate::devices::Device;
use crate::folding::{Unit, UnitEdge};
use crate::resources::{Res, NUM_RES, RES_NAMES};

/// How many copies the description asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replicas {
    /// As many as maximise the total FPS.
    Auto,
    Count(usize),
}

impl FromStr for Replicas {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "auto" => Ok(Replicas::Auto),
            n => match n.parse::<usize>() {
                Ok(k) if k >= 1 => Ok(Replicas::Count(k)),
                _ => Err(format!(
                    "replicas must be \"auto\" or a count >= 1, not {s:?}"
                )),
            },
        }
    }
}

/// Units `start..end` (in unit order) of one copy on one device.
#[derive(Clone, Debug, PartialEq)]
pub struct Segment {
    pub device: usize,
    pub start: usize,
    pub end: usize,
}

/// What stops one more copy: the resource, the card, and the first unit of the copy
/// that no longer fits there (None when the limit is the device count or the links).
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    pub resource: &'static str,
    pub device: usize,
    pub unit: Option<usize>,
}

#[derive(Clone, Debug)]
pub struct Solution {
    /// Candidate index per unit, the same in every copy.
    pub choice: Vec<usize>,
    pub period_cycles: u64,
    pub copies: Vec<Vec<Segment>>,
    /// None only when a requested count was reached and one more copy would still fit.
    pub binding: Option<Binding>,
    pub seconds: f64,
}

impl Solution {
    pub fn fps_per_copy(&self, clk_mhz: f64) -> f64 {
        clk_mhz * 1e6 / self.period_cycles.max(1) as f64
    }
}

/// What the packing works with.
struct Ctx<'a> {
    devs: &'a [Device],
    /// Device order along which copies may be cut (empty: whole copies only).
    order: &'a [usize],
    /// `cut_ok[i]`: cutting before unit i leaves exactly one stream crossing.
    cut_ok: Vec<bool>,
    considered: [bool; NUM_RES],
}

/// `n` units in unit order: can one cut sit before unit i (one edge crossing it)?
fn single_stream_cuts(n: usize, edges: &[UnitEdge]) -> Vec<bool> {
    let mut crossing = vec![0usize; n + 1];
    for e in edges {
        let (a, b) = (e.from.min(e.to), e.from.max(e.to));
        for c in crossing.iter_mut().take(b + 1).skip(a + 1) {
            *c += 1;
        }
    }
    crossing.iter().map(|&c| c == 1).collect()
}

fn fits(used: &Res, add: &Res, room: &Res, considered: &[bool; NUM_RES]) -> bool {
    (0..NUM_RES).all(|r| !considered[r] || used.get(r) + add.get(r) <= room.get(r) + 1e-9)
}

fn sub(a: &Res, b: &Res) -> Res {
    let mut r = *a;
    for i in 0..NUM_RES {
        r.set(i, a.get(i) - b.get(i));
    }
    r
}

/// The longest prefix of `res[from..]` that fits `room`: its end.
fn prefix_end(res: &[Res], from: usize, room: &Res, considered: &[bool; NUM_RES]) -> usize {
    let mut used = Res::default();
    let mut e = from;
    while e < res.len() && fits(&used, &res[e], room, considered) {
        used = used.add(&res[e]);
        e += 1;
    }
    e
}

fn sum(res: &[Res]) -> Res {
    res.iter().fold(Res::default(), |a, r| a.add(r))
}

/// Places up to `want` copies of a pipeline whose units cost `res`; `whole_first` packs
/// whole copies per card before cutting. Returns the copies and the room left per device.
fn pack(ctx: &Ctx, res: &[Res], want: usize, whole_first: bool) -> (Vec<Vec<Segment>>, Vec<Res>) {
    let n = res.len();
    let copy = sum(res);
    let mut room: Vec<Res> = ctx.devs.iter().map(|d| d.cap).collect();
    let mut copies = Vec::new();
    if whole_first || ctx.order.is_empty() {
        // Round robin, so that fewer copies than fit spread over the cards.
        let mut placed = true;
        while placed && copies.len() < want {
            placed = false;
            for d in 0..ctx.devs.len() {
                if copies.len() < want && fits(&Res::default(), &copy, &room[d], &ctx.considered) {
                    room[d] = sub(&room[d], &copy);
                    copies.push(vec![Segment {
                        device: d,
                        start: 0,
                        end: n,
                    }]);
                    placed = true;
                }
            }
        }
    }
    // Cut copies along the order: position k, each link k -> k+1 used at most once.
    let mut k = 0;
    while copies.len() < want && k < ctx.order.len() {
        let mut trial = room.clone();
        let mut segs = Vec::new();
        let (mut pos, mut u) = (k, 0);
        let placed = loop {
            let d = ctx.order[pos];
            let e = prefix_end(res, u, &trial[d], &ctx.considered);
            if e == n {
                trial[d] = sub(&trial[d], &sum(&res[u..n]));
                segs.push(Segment {
                    device: d,
                    start: u,
                    end: n,
                });
                break true;
            }
            // The latest cut at or before e that carries one stream (and leaves this
            // device a non-empty segment).
            let cut = (u + 1..=e).rev().find(|&c| ctx.cut_ok[c]);
            match cut {
                Some(c) if pos + 1 < ctx.order.len() => {
                    trial[d] = sub(&trial[d], &sum(&res[u..c]));
                    segs.push(Segment {
                        device: d,
                        start: u,
                        end: c,
                    });
                    u = c;
                    pos += 1;
                }
                _ => break false,
            }
        };
        if placed {
            // The next copy starts where this one ended: the link out of there is free.
            k = pos;
            room = trial;
            copies.push(segs);
        } else {
            k += 1;
        }
    }
    (copies, room)
}

/// Whole copies first or one cut chain, whichever holds more copies (whole first on ties:
/// fewer cables).
fn best_pack(ctx: &Ctx, res: &[Res], want: usize) -> (Vec<Vec<Segment>>, Vec<Res>) {
    let a = pack(ctx, res, want, true);
    if ctx.order.is_empty() || a.0.len() >= want {
        return a;
    }
    let b = pack(ctx, res, want, false);
    if b.0.len() > a.0.len() {
        b
    } else {
        a
    }
}

/// Where one more copy would stop: on the card where the longest prefix of it fits,
/// the first unit that does not and the resource it overflows most.
fn binding(ctx: &Ctx, res: &[Res], room: &[Res]) -> Option<Binding> {
    let n = res.len();
    let mut best: Option<(usize, usize)> = None; // (device, prefix end)
    for d in 0..ctx.devs.len() {
        let e = prefix_end(res, 0, &room[d], &ctx.considered);
        if best.is_none_or(|(_, be)| e > be) {
            best = Some((d, e));
        }
    }
    let (d, e) = best?;
    if e == n {
        return None;
    }
    let need = sum(&res[..=e]);
    let r = (0..NUM_RES)
        .filter(|&r| ctx.considered[r] && need.get(r) > room[d].get(r) + 1e-9)
        .max_by(|&a, &b| {
            let over = |r: usize| need.get(r) / room[d].get(r).max(1e-9);
            over(a).total_cmp(&over(b)).then(b.cmp(&a))
        })?;
    Some(Binding {
        resource: RES_NAMES[r],
        device: d,
        unit: Some(e),
    })
}

/// Per unit, the cheapest candidate no slower than `period` under `w` (ties: the slower,
/// i.e. narrower, candidate, then the first); None when some unit cannot reach it.
fn pick(units: &[Unit], period: u64, w: &[f64; NUM_RES]) -> Option<Vec<usize>> {
    units
        .iter()
        .map(|u| {
            let cost = |k: usize| {
                let r = &u.candidates[k].res;
                (0..NUM_RES).map(|i| w[i] * r.get(i)).sum::<f64>()
            };
            (0..u.candidates.len())
                .filter(|&k| u.candidates[k].cycles <= period)
                .min_by(|&a, &b| {
                    cost(a)
                        .total_cmp(&cost(b))
                        .then(u.candidates[b].cycles.cmp(&u.candidates[a].cycles))
                        .then(a.cmp(&b))
                })
        })
        .collect()
}

/// How hard a copy is to pack: the sum over resources of its share of one card's budget
/// to the 8th power, a smooth stand-in for the largest share (which sets how many copies
/// a card holds) that still tells apart plans with equal largest shares.
fn pressure(total: &Res, cap: &Res, considered: &[bool; NUM_RES]) -> f64 {
    (0..NUM_RES)
        .filter(|&r| considered[r] && cap.get(r) > 0.0)
        .map(|r| (total.get(r) / cap.get(r)).powi(8))
        .sum()
}

/// Local search from `choice`: sweep the units, moving each to its candidate no slower
/// than `period` that lowers the copy's [`pressure`] most, until a sweep changes nothing.
/// This is what trades resources against each other: BRAM weights to URAM while BRAM is
/// scarce, LUT multipliers to DSPs while LUTs are, layer by layer.
fn improve(
    units: &[Unit],
    period: u64,
    choice: &mut [usize],
    cap: &Res,
    considered: &[bool; NUM_RES],
) {
    let mut total = units
        .iter()
        .zip(choice.iter())
        .fold(Res::default(), |a, (u, &k)| a.add(&u.candidates[k].res));
    let mut now = pressure(&total, cap, considered);
    for _ in 0..50 {
        let mut changed = false;
        for (u, unit) in units.iter().enumerate() {
            let base = sub(&total, &unit.candidates[choice[u]].res);
            let mut best = (now, choice[u]);
            for (k, c) in unit.candidates.iter().enumerate() {
                if c.cycles > period || k == choice[u] {
                    continue;
                }
                let p = pressure(&base.add(&c.res), cap, considered);
                if p < best.0 * (1.0 - 1e-12) {
                    best = (p, k);
                }
            }
            if best.1 != choice[u] {
                choice[u] = best.1;
                total = base.add(&unit.candidates[best.1].res);
                now = best.0;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}

/// At most how many copies fit when every unit takes, per resource, its least of that
/// resource among the candidates no slower than `period` (a bound, never reached unless
/// one candidate is least in everything).
fn copies_bound(units: &[Unit], period: u64, cap_sum: &Res, considered: &[bool; NUM_RES]) -> f64 {
    let mut least = Res::default();
    for u in units {
        for r in 0..NUM_RES {
            let m = u
                .candidates
                .iter()
                .filter(|c| c.cycles <= period)
                .map(|c| c.res.get(r))
                .fold(f64::INFINITY, f64::min);
            least.set(r, least.get(r) + m);
        }
    }
    (0..NUM_RES)
        .filter(|&r| considered[r] && least.get(r) > 0.0)
        .map(|r| cap_sum.get(r) / least.get(r))
        .fold(f64::INFINITY, f64::min)
}

/// The replica plan with the highest total FPS (or exactly `want` copies at the highest
/// FPS). `order`: the device order copies may be cut along (empty: whole copies only).
pub fn solve(
    units: &[Unit],
    edges: &[UnitEdge],
    devs: &[Device],
    order: &[usize],
    considered: [bool; NUM_RES],
    want: Replicas,
) -> Result<Solution> {
    let start = std::time::Instant::now();
    let clk = devs[0].clk_mhz;
    if let Some(d) = devs.iter().find(|d| d.clk_mhz != clk) {
        bail!(
            "replicas need devices of one clock: {} runs at {} MHz, {} at {} MHz",
            devs[0].name,
            clk,
            d.name,
            d.clk_mhz
        );
    }
    let ctx = Ctx {
        devs,
        order,
        cut_ok: single_stream_cuts(units.len(), edges),
        considered,
    };
    let cap_sum = devs.iter().fold(Res::default(), |a, d| a.add(&d.cap));
    let limit = match want {
        Replicas::Auto => usize::MAX,
        Replicas::Count(k) => k,
    };
    let floor = units
        .iter()
        .map(|u| u.candidates.iter().map(|c| c.cycles).min().unwrap_or(0))
        .max()
        .unwrap_or(0);
    let mut periods: Vec<u64> = units
        .iter()
        .flat_map(|u| u.candidates.iter().map(|c| c.cycles))
        .filter(|&c| c >= floor)
        .collect();
    periods.sort_unstable();
    periods.dedup();
    // (fps, solution) of the best so far; and the most copies seen, for the error.
    let mut best: Option<(f64, Solution)> = None;
    let mut most: Option<(usize, Option<Binding>)> = None;
    let mut w = [0.0; NUM_RES];
    let mut cap_avg = Res::default();
    for r in 0..NUM_RES {
        if considered[r] && cap_sum.get(r) > 0.0 {
            w[r] = 1.0 / cap_sum.get(r);
        }
        cap_avg.set(r, cap_sum.get(r) / devs.len() as f64);
    }
    for &t in &periods {
        let bound = copies_bound(units, t, &cap_sum, &considered).min(limit as f64);
        let fps_bound = (bound + 1e-9).floor() * clk * 1e6 / t as f64;
        if best.as_ref().is_some_and(|(f, _)| fps_bound <= *f) {
            continue;
        }
        let Some(mut choice) = pick(units, t, &w) else {
            continue;
        };
        improve(units, t, &mut choice, &cap_avg, &considered);
        let res: Vec<Res> = units
            .iter()
            .zip(&choice)
            .map(|(u, &k)| u.candidates[k].res)
            .collect();
        let period = units
            .iter()
            .zip(&choice)
            .map(|(u, &k)| u.candidates[k].cycles)
            .max()
            .unwrap_or(1);
        let (copies, room) = best_pack(&ctx, &res, limit);
        let bind = binding(&ctx, &res, &room);
        if most.as_ref().is_none_or(|(m, _)| copies.len() > *m) {
            most = Some((copies.len(), bind.clone()));
        }
        let enough = match want {
            Replicas::Auto => !copies.is_empty(),
            Replicas::Count(k) => copies.len() == k,
        };
        let fps = copies.len() as f64 * clk * 1e6 / period.max(1) as f64;
        if enough && best.as_ref().is_none_or(|(f, _)| fps > f * (1.0 + 1e-12)) {
            best = Some((
                fps,
                Solution {
                    choice,
                    period_cycles: period,
                    copies,
                    binding: bind,
                    seconds: 0.0,
                },
            ));
        }
    }
    match best {
        Some((_, mut s)) => {
            s.seconds = start.elapsed().as_secs_f64();
            Ok(s)
        }
        None => {
            let (m, b) = most.unwrap_or((0, None));
            let why = match b {
                Some(b) => format!(
                    "; the next one stops at {} on {}",
                    b.resource, devs[b.device].name
                ),
                None => String::new(),
            };
            bail!(
                "replicas = {}: at most {m} cop{} of the pipeline fit the budgets at any \
                 folding{why} (ask for fewer replicas, \"auto\", or more cards)",
                match want {
                    Replicas::Auto => "auto".to_string(),
                    Replicas::Count(k) => k.to_string(),
                },
                if m == 1 { "y" } else { "ies" }
            )
        }
    }
}
