//! The partition plan (finn/partitioner's plan.json), the parts the deployment needs: which
//! layers run where, the cuts with their stream widths and bandwidth, and utilisation.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::deployment::{Deployment, End, Link};

#[derive(Clone, Debug, Deserialize)]
pub struct Plan {
    #[serde(default)]
    pub model: String,
    /// Absent from a device slice (the pipeline's rate depends on every device).
    #[serde(default)]
    pub fps: f64,
    /// FINN's critical-path latency (every layer's cycles summed, no overlap).
    #[serde(default)]
    pub finn_no_overlap_latency_ms: f64,
    pub devices: Vec<DevicePlan>,
    #[serde(default)]
    pub cuts: Vec<Cut>,
    pub layers: Vec<LayerPlan>,
    /// The copies of a replica plan (`finn-partition --replicas`); empty in a single-copy
    /// plan, whose deployment is built as before.
    #[serde(default)]
    pub replicas: Vec<crate::replicas::Replica>,
    /// Every copy's FPS summed (replica plans only).
    #[serde(default)]
    pub fps_total: f64,
    /// The device a slice (`plan-slice`) is for; None in a whole plan.
    #[serde(default)]
    pub device: Option<String>,
    #[serde(skip)]
    pub path: String,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct DevicePlan {
    pub name: String,
    #[serde(default)]
    pub layers: Vec<String>,
    #[serde(default)]
    pub utilization: BTreeMap<String, f64>,
    /// The network's layers on the card, in units (the report's one-card table); not in a
    /// plan slice, whose bytes stay those of the link config's key.
    #[serde(default, skip_serializing)]
    pub resources: BTreeMap<String, f64>,
    /// The AuroraFlow link kernels' area the partitioner keeps free on the card.
    #[serde(default, skip_serializing)]
    pub reserved_link_kernels: BTreeMap<String, f64>,
}

/// A cut as the partitioner writes it: its one definition, which reads older plans too.
pub use finn_partitioner::plan::Cut;

#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct LayerPlan {
    pub name: String,
    pub device: String,
    /// Stream widths with the planned folding (partitioner plans from this version on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_stream_bits: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_stream_bits: Option<u64>,
    /// One frame in bits on the layer's input / output: with the stream width, the words per
    /// frame that size the DMAs at the network's ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_bits_per_frame: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub out_bits_per_frame: Option<u64>,
    /// The SLR of its card the partitioner put the layer in (plans with SLR data).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slr: Option<String>,
}

impl Plan {
    pub fn load(path: &Path) -> Result<Plan> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read", path.display()))?;
        let mut p: Plan = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a partition plan JSON", path.display()))?;
        p.path = path.display().to_string();
        Ok(p)
    }

    pub fn first_device(&self) -> Option<&str> {
        self.layers.first().map(|l| l.device.as_str())
    }

    pub fn last_device(&self) -> Option<&str> {
        self.layers.last().map(|l| l.device.as_str())
    }

    pub fn device(&self, name: &str) -> Option<&DevicePlan> {
        self.devices.iter().find(|d| d.name == name)
    }

    /// The plan must place layers on exactly the deployment's devices.
    pub fn check_devices(&self, dep: &Deployment) -> Result<()> {
        let mine: Vec<String> = self.devices.iter().map(|d| d.name.clone()).collect();
        if mine != dep.device_names() {
            anyhow::bail!(
                "{}: the plan's devices [{}] are not the deployment's [{}] ({}); partition \
                 with the devices of this deployment (deploy-tool partitioner-inputs)",
                self.path,
                mine.join(", "),
                dep.device_names().join(", "),
                dep.src.path
            );
        }
        if crate::replicas::is_replica_plan(self) {
            return crate::replicas::check_devices(dep, self);
        }
        self.check_no_idle_device(dep)
    }

    /// Every device the deployment builds needs a FINN partition; a plan that places no layer
    /// on one (min-cut keeps a network that fits on one card whole) would fail the build far
    /// from its cause. A slice answers for its own device only (the others' layers are not in
    /// it).
    fn check_no_idle_device(&self, dep: &Deployment) -> Result<()> {
        let idle = self
            .devices
            .iter()
            .filter(|d| self.device.as_ref().is_none_or(|own| *own == d.name))
            .find(|d| d.layers.is_empty());
        let Some(idle) = idle else {
            return Ok(());
        };
        let dev = dep.device(&idle.name).expect("the device lists match");
        Err(dep.src.at(
            &dev.span,
            format!(
                "device {}: the plan ({}) places no layer on it, so it has no FINN partition to \
                 build; give it a floor the partitioner must meet (min_util = {{ LUT = 0.05 }}), \
                 partition with objective throughput or balanced, or remove the card from the \
                 description and the BUCK target's devices",
                idle.name, self.path
            ),
        ))
    }
}

/// Format tag of a device slice (`deploy-tool plan-slice`).
pub const SLICE_FORMAT: &str = "auroraforge-plan-slice/1";

/// What ONE device's link step reads from the plan, as a plan of the same schema: every
/// device's name (the device list is checked), this device's layers and utilisation, the
/// cuts it sends or receives (their cables are chosen among the cables of its own pairs, so
/// the other cuts never change that choice), and the pipeline's first and last layer by name
/// and device (which device gets the DMAs); stream widths and frame sizes only of this
/// device's layers.
/// A change confined to other devices (their folding, resources, the FPS it limits) leaves
/// the slice byte-identical, so this device's link config and bitstream stay cached.
pub fn device_slice(plan: &Plan, device: &str) -> Result<serde_json::Value> {
    if crate::replicas::is_replica_plan(plan) {
        return crate::replicas::device_slice(plan, device);
    }
    let own = plan.device(device).with_context(|| {
        format!(
            "{}: the plan has no device {device} (its devices: {})",
            plan.path,
            plan.devices
                .iter()
                .map(|d| d.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    let devices: Vec<DevicePlan> = plan
        .devices
        .iter()
        .map(|d| {
            if d.name == device {
                own.clone()
            } else {
                DevicePlan {
                    name: d.name.clone(),
                    layers: Vec::new(),
                    utilization: BTreeMap::new(),
                    resources: BTreeMap::new(),
                    reserved_link_kernels: BTreeMap::new(),
                }
            }
        })
        .collect();
    let last = plan.layers.len().saturating_sub(1);
    let layers: Vec<LayerPlan> = plan
        .layers
        .iter()
        .enumerate()
        .filter(|(i, l)| l.device == device || *i == 0 || *i == last)
        .map(|(_, l)| {
            if l.device == device {
                l.clone()
            } else {
                LayerPlan {
                    name: l.name.clone(),
                    device: l.device.clone(),
                    in_stream_bits: None,
                    out_stream_bits: None,
                    in_bits_per_frame: None,
                    out_bits_per_frame: None,
                    slr: None,
                }
            }
        })
        .collect();
    // The planned bandwidth of a cut is its width times the pipeline's FPS, which any
    // device can change; the report reads it from the whole plan.
    let cuts: Vec<serde_json::Value> = plan
        .cuts
        .iter()
        .filter(|c| c.from_device == device || c.to_device == device)
        .map(|c| {
            serde_json::json!({
                "from_layer": c.from_layer,
                "to_layer": c.to_layer,
                "from_device": c.from_device,
                "to_device": c.to_device,
                "stream_bits": c.stream_bits,
                "bits_per_frame": c.bits_per_frame,
            })
        })
        .collect();
    Ok(serde_json::json!({
        "format": SLICE_FORMAT,
        "device": device,
        "model": plan.model,
        "devices": devices,
        "cuts": cuts,
        "layers": layers,
    }))
}

/// A plan cut carried by a cable: `from` is the sending end.
#[derive(Clone, Debug)]
pub struct CutOnCable {
    pub cut: Cut,
    pub from: End,
    pub to: End,
    pub cable_m: f64,
}

/// Map every cut onto its own cable between its two devices (first free cable in file
/// order; both directions of a duplex cable may carry a cut each). A cut with no free cable
/// is an error that names the cut and the deployment file.
pub fn map_cuts(dep: &Deployment, plan: &Plan) -> Result<Vec<CutOnCable>> {
    // A replica plan names each copy's ports itself.
    if crate::replicas::is_replica_plan(plan) {
        return crate::replicas::cuts_on_cables(dep, plan);
    }
    // (cable index, sending end) already carrying a cut
    let mut taken: Vec<(usize, End)> = Vec::new();
    let mut out = Vec::new();
    for cut in &plan.cuts {
        let mut found = None;
        for (k, l) in dep.links.iter().enumerate() {
            for (from, to) in [(&l.a, &l.b), (&l.b, &l.a)] {
                if found.is_none()
                    && from.device == cut.from_device
                    && to.device == cut.to_device
                    && from != to
                    && !taken.iter().any(|(i, e)| *i == k && e == from)
                {
                    found = Some((k, l, from.clone(), to.clone()));
                }
            }
        }
        let (k, l, from, to): (usize, &Link, End, End) = found.ok_or_else(|| {
            dep.src.at(
                &dep.cabling_span,
                format!(
                    "cut {} -> {} of the plan ({} -> {}, {} bit stream) has no cable between \
                     {} and {}; add a [[link]] between them or use a topology that connects them",
                    cut.from_layer,
                    cut.to_layer,
                    cut.from_device,
                    cut.to_device,
                    cut.stream_bits,
                    cut.from_device,
                    cut.to_device
                ),
            )
        })?;
        taken.push((k, from.clone()));
        out.push(CutOnCable {
            cut: cut.clone(),
            from,
            to,
            cable_m: l.cable_m,
        });
    }
    Ok(out)
}
