//! The whole of a replica deployment: C copies of the pipeline at once, fed and drained by
//! the host over each card's PCIe link (`host_link`), as `infer` runs them: image i goes to
//! copy i mod C and the results come back in input order.
//!
//! - modelled (`analyse_whole`): round robin gives every copy the same frame rate r, at
//!   most the slowest copy's (`analytic`) and at most what each card's link carries for the
//!   copies it feeds (in) or drains (out): r ≤ bandwidth / (copies there × frame bytes). The
//!   whole delivers C·r.
//! - simulated (`simulate_whole`): every card's link is a server taking one frame after the
//!   other (host to card in input order, all images on the host from the start; card to
//!   host in the order the copies finish). Each copy is the row-by-row simulation of `des`,
//!   its input DMA starting a frame once the link has written it into the card's memory.
//!   The cards' memories decouple the links from the copies (a copy never waits for room to
//!   write a result, the link never waits for a copy), so the link schedule in, every
//!   copy's run on that schedule, and the link schedule out, taken one after the other, are
//!   the one concurrent run. The whole's FPS is the rate of results in input order over the
//!   second half of the rounds (whole rounds: a round ends when its last copy is done).

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde_json::Value;

use crate::analytic::analyse;
use crate::deployment::{build, read_json, Deployment, Plan, PlanCut, PlanReplica};
use crate::des::{simulate_fed, DesConfig};
use crate::geometry::{self, Geometry};
use crate::host_link::HostLink;
use crate::pipeline::Pipeline;

/// One copy: its pipeline, how its simulation is set up, and the cards of its two DMAs.
#[derive(Debug, Clone)]
pub struct CopyPipeline {
    pub index: usize,
    pub pipeline: Pipeline,
    pub des: DesConfig,
    /// The card whose input DMA feeds the copy, and the one whose output DMA drains it.
    pub in_device: String,
    pub out_device: String,
}

#[derive(Debug, Clone)]
pub struct Whole {
    pub copies: Vec<CopyPipeline>,
    /// Bytes of one image (host to card) and of one result (card to host).
    pub frame_in_bytes: f64,
    pub frame_out_bytes: f64,
    /// Each card's link to the host (every card of a deployment is on one platform).
    pub host: HostLink,
    /// The plan's `fps_total`: the partitioner's sum of every copy's FPS.
    pub plan_fps_total: Option<f64>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WholeAnalysis {
    pub fps: f64,
    /// What bounds it: a copy's bottleneck or a card's PCIe link.
    pub limit: String,
}

#[derive(Debug, Clone)]
pub struct WholeResult {
    pub fps: f64,
    /// Rounds of C frames simulated.
    pub rounds: u32,
    /// Image 0: the host starting to write it to when its result is back on the host.
    pub first_latency_s: f64,
    /// When each image's result is back on the host, in input order.
    pub back_s: Vec<f64>,
}

/// The devices of `copies`' input (or output) DMAs, each with how many copies use it.
fn per_device(copies: &[CopyPipeline], input: bool) -> Vec<(String, usize)> {
    let mut v: Vec<(String, usize)> = Vec::new();
    for c in copies {
        let d = if input { &c.in_device } else { &c.out_device };
        match v.iter_mut().find(|(n, _)| n == d) {
            Some((_, k)) => *k += 1,
            None => v.push((d.clone(), 1)),
        }
    }
    v
}

pub fn analyse_whole(w: &Whole) -> WholeAnalysis {
    let mut rate = f64::INFINITY;
    let mut limit = String::new();
    for c in &w.copies {
        let a = analyse(&c.pipeline);
        if a.fps < rate {
            (rate, limit) = (a.fps, format!("copy {}: {}", c.index, a.bottleneck));
        }
    }
    for (input, bytes, bw) in [
        (true, w.frame_in_bytes, w.host.in_bytes_per_s),
        (false, w.frame_out_bytes, w.host.out_bytes_per_s),
    ] {
        for (d, n) in per_device(&w.copies, input) {
            let r = bw / (n as f64 * bytes);
            if r < rate {
                let way = if input {
                    "host to card"
                } else {
                    "card to host"
                };
                (rate, limit) = (r, format!("{} of {d}, {way}", w.host.name));
            }
        }
    }
    WholeAnalysis {
        fps: w.copies.len() as f64 * rate,
        limit,
    }
}

/// Each card's PCIe link one way: a server taking one transfer after the other.
#[derive(Default)]
struct Links(Vec<(String, f64)>);

impl Links {
    /// A transfer of `t` seconds on `device`'s link, not before `from`: (start, end).
    fn carry(&mut self, device: &str, from: f64, t: f64) -> (f64, f64) {
        let k = match self.0.iter().position(|(d, _)| d == device) {
            Some(k) => k,
            None => {
                self.0.push((device.to_string(), 0.0));
                self.0.len() - 1
            }
        };
        let start = self.0[k].1.max(from);
        self.0[k].1 = start + t;
        (start, start + t)
    }
}

/// `rounds` rounds (at least 2) of one image per copy through the whole.
pub fn simulate_whole(w: &Whole, rounds: u32) -> WholeResult {
    let c = w.copies.len();
    let rounds = rounds.max(2);
    let n = rounds as usize * c;
    let device_of = |i: usize| &w.copies[i % c];
    // host to card: each card's link writes its copies' images in input order
    let t_in = w.frame_in_bytes / w.host.in_bytes_per_s;
    let mut link_in = Links::default();
    let written: Vec<(f64, f64)> = (0..n)
        .map(|i| link_in.carry(&device_of(i).in_device, 0.0, t_in))
        .collect();
    // every copy on its own images
    let mut done = vec![0.0; n];
    for (k, copy) in w.copies.iter().enumerate() {
        let ready: Vec<f64> = (0..rounds as usize).map(|j| written[j * c + k].1).collect();
        let cfg = DesConfig {
            frames: rounds,
            ..copy.des
        };
        let r = simulate_fed(&copy.pipeline, &cfg, &ready);
        for (j, t) in r.done_s.iter().enumerate() {
            done[j * c + k] = *t;
        }
    }
    // card to host: each card's link reads results in the order the copies finish them
    let t_out = w.frame_out_bytes / w.host.out_bytes_per_s;
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| done[a].total_cmp(&done[b]).then(a.cmp(&b)));
    let mut link_out = Links::default();
    let mut back = vec![0.0; n];
    for i in order {
        back[i] = link_out.carry(&device_of(i).out_device, done[i], t_out).1;
    }
    // in input order: a result is returned once every earlier one is
    let mut in_order = back.clone();
    for i in 1..n {
        in_order[i] = in_order[i].max(in_order[i - 1]);
    }
    let from = (rounds as usize / 2) * c - 1;
    let fps = (n - 1 - from) as f64 / (in_order[n - 1] - in_order[from]);
    WholeResult {
        fps,
        rounds,
        first_latency_s: back[0] - written[0].0,
        back_s: in_order,
    }
}

/// The whole of the deployment whose plan is a replica plan; None for a one-copy plan.
pub fn load(plan_path: &Path, exec_dir: &Path, topology_path: &Path) -> Result<Option<Whole>> {
    let plan: Plan = read_json(plan_path, "partition plan")?;
    if plan.replicas.is_empty() {
        return Ok(None);
    }
    let topology: Value = read_json(topology_path, "topology")?;
    let geometry = geometry::load(exec_dir)?;
    let platform = topology["platform"].as_str().with_context(|| {
        format!(
            "{}: no `platform`: the whole's PCIe links follow from it",
            topology_path.display()
        )
    })?;
    let host = HostLink::from_platform(platform)
        .with_context(|| format!("{}", topology_path.display()))?;
    let mut copies = Vec::new();
    let mut first: Option<Deployment> = None;
    for r in &plan.replicas {
        let dep = copy_deployment(&plan, &geometry, &topology, topology_path, r)
            .with_context(|| format!("{}: copy {}", plan_path.display(), r.index))?;
        let ends = (r.segments.first(), r.segments.last());
        let (Some(a), Some(b)) = ends else {
            bail!("{}: copy {} has no segments", plan_path.display(), r.index);
        };
        copies.push(CopyPipeline {
            index: r.index,
            des: dep.des_config(2),
            pipeline: dep.pipeline.clone(),
            in_device: a.device.clone(),
            out_device: b.device.clone(),
        });
        first.get_or_insert(dep);
    }
    let dep = first.expect("a replica plan has copies");
    let last = &dep.pipeline.stages[dep.pipeline.stages.len() - 1].name;
    let out_bits = geometry
        .layers
        .get(last)
        .map_or(0, |g| g.out_bits_per_frame);
    Ok(Some(Whole {
        copies,
        frame_in_bytes: geometry.input_bits_per_frame as f64 / 8.0,
        frame_out_bytes: out_bits as f64 / 8.0,
        host,
        plan_fps_total: plan.fps_total,
    }))
}

/// Copy `r`'s pipeline: the plan's layers (every copy has copy 0's folding) on the copy's
/// devices, cut where the copy is.
fn copy_deployment(
    plan: &Plan,
    geometry: &Geometry,
    topology: &Value,
    topology_path: &Path,
    r: &PlanReplica,
) -> Result<Deployment> {
    let (mut p, mut g) = (plan.clone(), geometry.clone());
    let listed: usize = r.segments.iter().map(|s| s.layers.len()).sum();
    if listed != p.layers.len() {
        bail!(
            "its segments list {listed} layers, the plan has {}: is it a plan of one folding?",
            p.layers.len()
        );
    }
    for s in &r.segments {
        for name in &s.layers {
            let l = p
                .layers
                .iter_mut()
                .find(|l| &l.name == name)
                .with_context(|| format!("layer {name} of its segments is not in the plan"))?;
            l.device = s.device.clone();
            if let Some(gl) = g.layers.get_mut(name) {
                gl.device = s.device.clone();
            }
        }
    }
    p.cuts = r
        .cuts
        .iter()
        .map(|c| {
            let bits = g
                .layers
                .get(&c.from_layer)
                .map(|l| l.out_bits_per_frame)
                .with_context(|| format!("cut after {}: no such layer", c.from_layer))?;
            Ok(PlanCut {
                from_layer: c.from_layer.clone(),
                to_layer: c.to_layer.clone(),
                from_device: c.from_device.clone(),
                to_device: c.to_device.clone(),
                bits_per_frame: bits,
            })
        })
        .collect::<Result<_>>()?;
    build(p, g, topology, topology_path)
}
