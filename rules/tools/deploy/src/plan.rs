//! The partition plan (finn/partitioner's plan.json), the parts the deployment needs: which
//! layers run where, the cuts with their stream widths and bandwidth, and utilisation.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};
use serde::Deserialize;

use crate::deployment::{Deployment, End, Link};

#[derive(Clone, Debug, Deserialize)]
pub struct Plan {
    #[serde(default)]
    pub model: String,
    pub fps: f64,
    pub devices: Vec<DevicePlan>,
    #[serde(default)]
    pub cuts: Vec<Cut>,
    pub layers: Vec<LayerPlan>,
    #[serde(skip)]
    pub path: String,
}

#[derive(Clone, Debug, Deserialize)]
pub struct DevicePlan {
    pub name: String,
    #[serde(default)]
    pub layers: Vec<String>,
    #[serde(default)]
    pub utilization: BTreeMap<String, f64>,
}

#[derive(Clone, Debug, Deserialize, serde::Serialize, PartialEq)]
pub struct Cut {
    pub from_layer: String,
    pub to_layer: String,
    pub from_device: String,
    pub to_device: String,
    pub stream_bits: u64,
    #[serde(default)]
    pub gbps: f64,
}

#[derive(Clone, Debug, Deserialize)]
pub struct LayerPlan {
    pub name: String,
    pub device: String,
    /// Stream widths with the planned folding (partitioner plans from this version on).
    #[serde(default)]
    pub in_stream_bits: Option<u64>,
    #[serde(default)]
    pub out_stream_bits: Option<u64>,
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
        Ok(())
    }
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
