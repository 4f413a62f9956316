//! The run record `aurora-host infer` writes (run.json).

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunRecord {
    pub deployment: String,
    pub command: String,
    pub images: u64,
    pub devices: Vec<RunDevice>,
    pub links: Vec<RunLink>,
    pub frames: Vec<RunFrame>,
    pub wall_s: f64,
    /// `infer --labels`: the accuracy of the pipeline and of the unpartitioned model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accuracy: Option<RunAccuracy>,
    /// The model's training record; absent: seeded random (untrained) weights.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub training: Option<String>,
    /// A replica deployment: every copy together (absent: one copy of the pipeline).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub whole: Option<RunWhole>,
}

/// A replica deployment's copies together, modelled and simulated with each card's PCIe
/// link to the host (host/perf_model `whole`), beside one copy's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunWhole {
    pub copies: u64,
    pub modelled_fps: f64,
    /// What bounds the modelled figure: a copy's bottleneck or a card's PCIe link.
    pub limit: String,
    pub simulated_fps: f64,
    /// Rounds of one image per copy the simulation ran.
    pub rounds: u64,
    /// Image 0 from the host starting to write it to its result back on the host.
    pub first_latency_s: f64,
    /// "PCIe Gen3 x16" and its payload rate each way, per card.
    pub host_link: String,
    pub host_link_gbytes_per_s: f64,
    /// The partition plan's `fps_total` (the partitioner's sum of every copy's FPS).
    pub plan_fps_total: Option<f64>,
}

/// Correct top-1 / top-5 predictions of one model over the labelled images.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunHits {
    pub top1: u64,
    pub top5: u64,
}

/// The labels file, the number of labelled images, and the hits of the multi-card pipeline
/// and of the unpartitioned model (accuracy = hits / images).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunAccuracy {
    pub labels: String,
    pub images: u64,
    pub pipeline: RunHits,
    pub unpartitioned: RunHits,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunDevice {
    pub name: String,
    pub clock_mhz: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunLink {
    /// "fpga0:1->fpga1:0": sender device:port -> receiver device:port.
    pub name: String,
    pub samples: Vec<LinkSample>,
    #[serde(rename = "final")]
    pub final_counters: LinkFinal,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct LinkSample {
    pub t_s: f64,
    pub tx_beats: u64,
    pub rx_beats: u64,
    pub xoff: u64,
    pub xon: u64,
    pub max_in_flight: u64,
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct LinkFinal {
    pub tx_beats: u64,
    pub rx_beats: u64,
    pub xoff: u64,
    pub xon: u64,
    pub max_in_flight: u64,
    pub overflow: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunFrame {
    pub index: i64,
    pub top1: i64,
    pub top5: Vec<i64>,
    pub reference_top1: i64,
    pub reference_top5: Vec<i64>,
    pub bit_exact: bool,
}

impl RunFrame {
    /// Agrees with the reference: the same top-1, the same top-5 and the same tensor.
    pub fn agrees(&self) -> bool {
        self.top1 == self.reference_top1 && self.top5 == self.reference_top5 && self.bit_exact
    }
}

impl RunRecord {
    pub fn read(path: &Path) -> Result<RunRecord> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read the run record", path.display()))?;
        let run: RunRecord = serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "{}:{}:{}: not a run record ({e}); it is written by `aurora-host infer`",
                path.display(),
                e.line(),
                e.column()
            )
        })?;
        if run.command != "infer" {
            bail!(
                "{}: a record of `{}`, not of `infer`",
                path.display(),
                run.command
            );
        }
        for l in &run.links {
            if l.samples.windows(2).any(|w| w[1].t_s < w[0].t_s) {
                bail!(
                    "{}: link {}: samples are not in time order",
                    path.display(),
                    l.name
                );
            }
        }
        Ok(run)
    }
}
