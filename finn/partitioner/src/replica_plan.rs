//! The replica part of a plan: every copy's layers per device and the links its cuts use,
//! the total FPS, what bounds one more copy, and per-device use summed over the copies.

use serde::{Deserialize, Serialize};

use crate::plan::{Inputs, Plan};
use crate::replicas::Solution;
use crate::resources::{Res, NUM_RES, RES_NAMES};
use crate::topology::Topology;

// These three types are also the deployment tool's reader of a plan's `replicas`
// (deploy/tool/src/replicas.rs): the defaults let it read a plan that leaves out the
// figures it does not use.

/// One copy of the pipeline.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct ReplicaPlan {
    pub index: usize,
    #[serde(default)]
    pub fps: f64,
    /// In pipeline order: the first segment takes the network input from the host, the last
    /// gives the output.
    pub segments: Vec<SegmentPlan>,
    #[serde(default)]
    pub cuts: Vec<ReplicaCut>,
}

/// The layers of one copy on one device.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct SegmentPlan {
    pub device: String,
    pub first_layer: String,
    pub last_layer: String,
    #[serde(default)]
    pub layers: Vec<String>,
}

/// One stream of one copy over a cable: `from_device:from_port` to `to_device:to_port`.
#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct ReplicaCut {
    pub from_layer: String,
    pub to_layer: String,
    pub from_device: String,
    pub from_port: u32,
    pub to_device: String,
    pub to_port: u32,
    pub stream_bits: u64,
    #[serde(default)]
    pub gbps: f64,
}

/// What stops one more copy: `resource` on `device` (its utilisation there), at `layer`,
/// the first layer of that copy that no longer fits.
#[derive(Debug, Serialize)]
pub struct BindingPlan {
    pub resource: &'static str,
    pub device: String,
    pub layer: Option<String>,
    pub utilization: f64,
}

/// The ports a stream from device `a` to device `b` uses: the topology's link between
/// them, else the chain convention (port 1 of a card to port 0 of the next).
fn ports(topo: &Topology, inp: &Inputs, a: usize, b: usize) -> (u32, u32) {
    let (na, nb) = (&inp.devices[a].name, &inp.devices[b].name);
    if let Topology::Links { links } = topo {
        for l in links {
            if (&l.a, &l.b) == (na, nb) {
                return (l.a_port, l.b_port);
            }
            if (&l.b, &l.a) == (na, nb) {
                return (l.b_port, l.a_port);
            }
        }
    }
    (1, 0)
}

/// Adds the replicas to a plan built for copy 0 and sums every copy into the devices'
/// resources and utilisation.
pub fn attach(plan: &mut Plan, inp: &Inputs, sol: &Solution, topo: &Topology) {
    let clk = inp.devices[0].clk_mhz;
    let fps = sol.fps_per_copy(clk);
    let layers_of = |start: usize, end: usize| -> Vec<usize> {
        (0..inp.est.layers.len())
            .filter(|&i| (start..end).contains(&inp.unit_of[i]))
            .collect()
    };
    let mut used = vec![Res::default(); inp.devices.len()];
    let mut busy = vec![false; inp.devices.len()];
    let mut max_cycles = vec![0u64; inp.devices.len()];
    let mut replicas = Vec::new();
    for (index, copy) in sol.copies.iter().enumerate() {
        let mut segments = Vec::new();
        let mut cuts = Vec::new();
        for (k, seg) in copy.iter().enumerate() {
            let mine = layers_of(seg.start, seg.end);
            for &i in &mine {
                used[seg.device] = used[seg.device].add(&plan.layers[i].res);
                max_cycles[seg.device] = max_cycles[seg.device].max(plan.layers[i].cycles);
            }
            busy[seg.device] = true;
            let name = |i: usize| inp.est.layers[i].name.clone();
            segments.push(SegmentPlan {
                device: inp.devices[seg.device].name.clone(),
                first_layer: name(mine[0]),
                last_layer: name(*mine.last().unwrap_or(&mine[0])),
                layers: mine.iter().map(|&i| name(i)).collect(),
            });
            if let Some(next) = copy.get(k + 1) {
                // The one edge across the cut (the packing only cuts where there is one).
                let e = inp
                    .edges
                    .iter()
                    .find(|e| e.from < seg.end && e.to >= seg.end)
                    .expect("a cut crosses one edge");
                let (fp, tp) = ports(topo, inp, seg.device, next.device);
                cuts.push(ReplicaCut {
                    from_layer: name(e.from_layer),
                    to_layer: name(e.to_layer),
                    from_device: inp.devices[seg.device].name.clone(),
                    from_port: fp,
                    to_device: inp.devices[next.device].name.clone(),
                    to_port: tp,
                    stream_bits: plan.layers[e.from_layer].out_stream_bits,
                    gbps: e.bits_per_frame as f64 * fps / 1e9,
                });
            }
        }
        replicas.push(ReplicaPlan {
            index,
            fps,
            segments,
            cuts,
        });
    }
    for (d, dp) in plan.devices.iter_mut().enumerate() {
        let dev = &inp.devices[d];
        dp.resources = used[d];
        dp.max_cycles = max_cycles[d];
        dp.fps = if max_cycles[d] > 0 {
            dev.clk_mhz * 1e6 / max_cycles[d] as f64
        } else {
            0.0
        };
        dp.reserved_link_kernels = if busy[d] {
            dev.reserved
        } else {
            Res::default()
        };
        for (r, name) in RES_NAMES.iter().enumerate().take(NUM_RES) {
            let u = used[d].get(r) + dp.reserved_link_kernels.get(r);
            dp.utilization.insert(*name, u / dev.total.get(r).max(1.0));
        }
    }
    plan.fps_total = Some(fps * sol.copies.len() as f64);
    plan.binding = sol.binding.as_ref().map(|b| {
        let r = RES_NAMES.iter().position(|n| *n == b.resource).unwrap_or(0);
        BindingPlan {
            resource: b.resource,
            device: inp.devices[b.device].name.clone(),
            layer: b
                .unit
                .map(|u| inp.est.layers[inp.units[u].layers[0]].name.clone()),
            utilization: plan.devices[b.device].utilization[RES_NAMES[r]],
        }
    });
    plan.replicas = Some(replicas);
}
