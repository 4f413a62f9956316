//! A deployment's pipeline: the partition plan (per-layer op, device, folding, cycles,
//! stream widths, the cuts), the executor graphs (geometry) and the topology (device clocks,
//! which cable carries each cut, its length).

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::des::DesConfig;
use crate::geometry::{self, Geometry};
use crate::link::LinkModel;
use crate::pipeline::{Pipeline, Stage, StageKind};

#[derive(Debug, Clone, Deserialize)]
pub struct PlanLayer {
    pub name: String,
    pub op_type: String,
    pub device: String,
    /// PE, SIMD and the like; a replica plan's resource choices (`ram_style`, `resType`:
    /// strings) are left out, the model does not read them.
    #[serde(default, deserialize_with = "integer_folding")]
    pub folding: BTreeMap<String, i64>,
    pub cycles: u64,
    pub in_stream_bits: u64,
    pub out_stream_bits: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PlanDevice {
    pub name: String,
    pub clk_mhz: f64,
    #[serde(default)]
    pub utilization: BTreeMap<String, f64>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PlanCut {
    pub from_layer: String,
    pub to_layer: String,
    pub from_device: String,
    pub to_device: String,
    pub bits_per_frame: u64,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Plan {
    pub fps: f64,
    /// FINN's no-overlap estimate: the sum of every layer's full cycles.
    #[serde(rename = "finn_no_overlap_latency_ms")]
    pub finn_latency_ms: f64,
    pub bottleneck: String,
    pub devices: Vec<PlanDevice>,
    pub cuts: Vec<PlanCut>,
    pub layers: Vec<PlanLayer>,
    /// A replica plan's copies (`finn-partition --replicas`); empty: one pipeline.
    #[serde(default)]
    pub replicas: Vec<PlanReplica>,
    /// A replica plan's FPS of every copy together (the partitioner's sum).
    #[serde(default)]
    pub fps_total: Option<f64>,
}

/// One copy of the pipeline in a replica plan: its layers per device, in pipeline order,
/// and the cables its cuts take.
#[derive(Debug, Clone, Deserialize)]
pub struct PlanReplica {
    pub index: usize,
    pub fps: f64,
    pub segments: Vec<PlanSegment>,
    #[serde(default)]
    pub cuts: Vec<ReplicaCut>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct PlanSegment {
    pub device: String,
    pub layers: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ReplicaCut {
    pub from_layer: String,
    pub to_layer: String,
    pub from_device: String,
    pub to_device: String,
}

/// A cable of the topology that carries a cut.
#[derive(Debug, Clone)]
pub struct LinkUse {
    /// "fpga0:1->fpga1:0", sender first (the name run.json uses).
    pub name: String,
    pub cable_m: f64,
    pub model: LinkModel,
    pub bits_per_frame: u64,
    /// Rows of the cut tensor per frame.
    pub rows: u32,
}

#[derive(Debug, Clone)]
pub struct Deployment {
    pub plan: Plan,
    pub geometry: Geometry,
    pub links: Vec<LinkUse>,
    pub pipeline: Pipeline,
    /// Layers beside the modelled path (a residual block's shortcut), not in `pipeline`.
    pub off_path: Vec<String>,
}

impl Deployment {
    /// A simulation of `frames` frames whose link FIFOs hold as many rows as the links' RX
    /// FIFOs do (at least 2).
    pub fn des_config(&self, frames: u32) -> DesConfig {
        let rows = self
            .links
            .iter()
            .map(|l| {
                let row_bytes = (l.bits_per_frame / 8 / l.rows.max(1) as u64).max(1);
                (l.model.rx_fifo_bytes / row_bytes).max(2) as u32
            })
            .min()
            .unwrap_or(2);
        DesConfig {
            frames,
            link_fifo_rows: rows,
            ..DesConfig::default()
        }
    }
}

pub fn read_json<T: serde::de::DeserializeOwned>(path: &Path, what: &str) -> Result<T> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read {what}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("{}: not a valid {what}", path.display()))
}

fn end(e: &Value) -> (&str, u64) {
    (
        e["device"].as_str().unwrap_or(""),
        e["port"].as_u64().unwrap_or(0),
    )
}

/// The cable between `from` and `to` in topology.json's links, as (name, cable_m).
fn cable(topology: &Value, topo_path: &Path, from: &str, to: &str) -> Result<(String, f64)> {
    let links = topology["links"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    for l in links {
        let (a, b) = (end(&l["a"]), end(&l["b"]));
        let m = l["cable_m"].as_f64().unwrap_or(0.0);
        if a.0 == from && b.0 == to {
            return Ok((format!("{}:{}->{}:{}", a.0, a.1, b.0, b.1), m));
        }
        if b.0 == from && a.0 == to {
            return Ok((format!("{}:{}->{}:{}", b.0, b.1, a.0, a.1), m));
        }
    }
    bail!(
        "{}: no cable between {from} and {to}, which the plan's cut needs: is it this deployment's topology?",
        topo_path.display()
    )
}

pub fn load(plan_path: &Path, exec_dir: &Path, topology_path: &Path) -> Result<Deployment> {
    let plan: Plan = read_json(plan_path, "partition plan")?;
    let topology: Value = read_json(topology_path, "topology")?;
    let geometry = geometry::load(exec_dir)?;
    build(plan, geometry, &topology, topology_path)
        .with_context(|| format!("deployment of {}", plan_path.display()))
}

pub fn build(
    plan: Plan,
    geometry: Geometry,
    topology: &Value,
    topology_path: &Path,
) -> Result<Deployment> {
    let clock = |dev: &str| -> Result<f64> {
        plan.devices
            .iter()
            .find(|d| d.name == dev)
            .map(|d| d.clk_mhz * 1e6)
            .with_context(|| {
                format!("plan: layer on device {dev}, which the plan's devices do not list")
            })
    };
    let first = plan.layers.first().context("plan: no layers")?;
    let mut stages = vec![Stage {
        name: "input stream".into(),
        kind: StageKind::Source,
        device: first.device.clone(),
        in_rows: geometry.input_rows,
        out_rows: geometry.input_rows,
        frame_s: geometry.input_bits_per_frame as f64
            / first.in_stream_bits.max(1) as f64
            / clock(&first.device)?,
        need: (1..=geometry.input_rows).collect(),
        delay_s: 0.0,
    }];
    let mut links = Vec::new();
    let (on_path, off_path) = longest_path(&plan.layers, &geometry)?;
    let mut prev_out: Option<&[String]> = None;
    for l in on_path {
        let g = &geometry.layers[&l.name];
        if let Some(p) = prev_out {
            if !g.in_tensors.iter().any(|t| p.contains(t)) {
                bail!(
                    "layer {} reads {:?} but the layer before it on the path writes {p:?}",
                    l.name,
                    g.in_tensors
                );
            }
        }
        if g.device != l.device {
            bail!(
                "layer {}: the plan puts it on {}, the executor graphs on {}",
                l.name,
                l.device,
                g.device
            );
        }
        prev_out = Some(&g.out_tensors);
        stages.push(Stage {
            name: l.name.clone(),
            kind: StageKind::Layer,
            device: l.device.clone(),
            in_rows: g.in_rows,
            out_rows: g.out_rows,
            frame_s: l.cycles.max(1) as f64 / clock(&l.device)?,
            need: g.need.clone(),
            delay_s: 0.0,
        });
        for c in plan.cuts.iter().filter(|c| c.from_layer == l.name) {
            let (name, cable_m) = cable(topology, topology_path, &c.from_device, &c.to_device)?;
            let model = LinkModel::new(&Map::new(), cable_m, clock(&c.from_device)? / 1e6)
                .with_context(|| format!("link {name}"))?;
            stages.push(Stage {
                name: name.clone(),
                kind: StageKind::Link,
                device: format!("{}->{}", c.from_device, c.to_device),
                in_rows: g.out_rows,
                out_rows: g.out_rows,
                frame_s: c.bits_per_frame as f64 / model.bits_per_s,
                need: (1..=g.out_rows).collect(),
                delay_s: model.latency_s,
            });
            links.push(LinkUse {
                name,
                cable_m,
                model,
                bits_per_frame: c.bits_per_frame,
                rows: g.out_rows,
            });
        }
    }
    let pipeline = Pipeline::new(stages)?;
    Ok(Deployment {
        plan,
        geometry,
        links,
        pipeline,
        off_path,
    })
}

/// The plan's layers split into the longest path from the network input to the last
/// layer (by layer count, the plan's order being topological) and the layers beside it.
///
/// The pipeline model is a chain of stages; a network with branches is modelled along
/// its longest path, which every cut lies on (a cut carries the one stream between two
/// blocks) and which sets the fill latency, the shorter branch (a shortcut) filling
/// alongside it.
pub fn longest_path<'a>(
    layers: &'a [PlanLayer],
    geometry: &Geometry,
) -> Result<(Vec<&'a PlanLayer>, Vec<String>)> {
    let mut producer: BTreeMap<&str, usize> = BTreeMap::new();
    let mut depth = vec![0usize; layers.len()];
    let mut from: Vec<Option<usize>> = vec![None; layers.len()];
    for (i, l) in layers.iter().enumerate() {
        let g = geometry.layers.get(&l.name).with_context(|| {
            format!("plan layer {} is in no executor graph: are plan and [exec] from the same partition?", l.name)
        })?;
        for t in &g.in_tensors {
            if let Some(&p) = producer.get(t.as_str()) {
                if depth[p] + 1 > depth[i] {
                    depth[i] = depth[p] + 1;
                    from[i] = Some(p);
                }
            }
        }
        for t in &g.out_tensors {
            producer.insert(t.as_str(), i);
        }
    }
    let mut on = vec![false; layers.len()];
    let mut cur = layers.len().checked_sub(1);
    while let Some(i) = cur {
        on[i] = true;
        cur = from[i];
    }
    if !on[0] {
        bail!(
            "plan layer {} is not on the path to the last layer {} in the executor graphs: are plan and [exec] from the same partition?",
            layers[0].name,
            layers[layers.len() - 1].name
        );
    }
    let path = layers.iter().zip(&on).filter(|(_, &o)| o).map(|(l, _)| l);
    let off = layers.iter().zip(&on).filter(|(_, &o)| !o);
    Ok((path.collect(), off.map(|(l, _)| l.name.clone()).collect()))
}

/// The integer entries of a layer's folding.
fn integer_folding<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<BTreeMap<String, i64>, D::Error> {
    let all: BTreeMap<String, serde_json::Value> = Deserialize::deserialize(d)?;
    Ok(all
        .into_iter()
        .filter_map(|(k, v)| v.as_i64().map(|i| (k, i)))
        .collect())
}
