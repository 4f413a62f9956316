//! One self-contained HTML page of an inference run (`aurora-host infer`'s run.json) with
//! the deployment it ran: per-device utilisation against the budget, per-link traffic and
//! flow-control events over time, a histogram of per-frame latencies (from the pipeline
//! simulation), and the modelled and simulated figures beside the paper's measured ones.

pub mod ring;
pub mod ring_page;
pub mod run;
pub mod svg;

mod page;

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use perf_model::{analyse, simulate, Deployment};
use serde::Deserialize;

pub use page::render;
pub use run::RunRecord;

/// Per device: the partitioner's utilisation budget per resource (devices.json `max_util`).
pub type Budgets = BTreeMap<String, BTreeMap<String, f64>>;

#[derive(Deserialize)]
struct DevicesJson {
    devices: Vec<DeviceBudget>,
}

#[derive(Deserialize)]
struct DeviceBudget {
    name: String,
    #[serde(default)]
    max_util: BTreeMap<String, f64>,
}

pub fn read_budgets(path: &Path) -> Result<Budgets> {
    let d: DevicesJson =
        perf_model::deployment::read_json(path, "device budgets (the partitioner's devices.json)")?;
    Ok(d.devices
        .into_iter()
        .map(|d| (d.name, d.max_util))
        .collect())
}

/// The figures a run is reported with.
#[derive(Debug, Clone)]
pub struct Figures {
    pub modelled_fps: f64,
    pub modelled_latency_s: f64,
    pub bottleneck: String,
    pub simulated_fps: f64,
    /// The first frame, through an empty pipeline (what the model predicts).
    pub simulated_latency_s: f64,
    /// Every simulated frame, back to back.
    pub simulated_latencies_s: Vec<f64>,
    /// FINN's no-overlap estimate: the sum of every layer's full cycles.
    pub finn_latency_s: f64,
    /// Per link of the pipeline: name, modelled one-way latency, payload Gbit/s.
    pub links: Vec<(String, f64, f64)>,
}

/// Model and simulate `frames` frames (at least 2) of the deployment.
pub fn figures(dep: &Deployment, frames: u32) -> Figures {
    let a = analyse(&dep.pipeline);
    let d = simulate(&dep.pipeline, &dep.des_config(frames.max(2)));
    Figures {
        modelled_fps: a.fps,
        modelled_latency_s: a.latency_s,
        bottleneck: a.bottleneck,
        simulated_fps: d.fps,
        simulated_latency_s: d.latencies_s[0],
        simulated_latencies_s: d.latencies_s,
        finn_latency_s: dep.plan.finn_latency_ms * 1e-3,
        links: dep
            .links
            .iter()
            .map(|l| (l.name.clone(), l.model.latency_s, l.model.bits_per_s / 1e9))
            .collect(),
    }
}

impl Figures {
    /// The lines `infer` prints.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "modelled: {:.2} FPS (bottleneck {}), latency {:.4} ms (pipelined: fill of every layer and link + one frame through the bottleneck)\n\
             simulated: {:.2} FPS, latency {:.4} ms (first frame), {:.4}..{:.4} ms over {} frames\n\
             FINN's no-overlap estimate (sum of every layer's cycles): {:.4} ms\n",
            self.modelled_fps,
            self.bottleneck,
            self.modelled_latency_s * 1e3,
            self.simulated_fps,
            self.simulated_latency_s * 1e3,
            min(&self.simulated_latencies_s) * 1e3,
            max(&self.simulated_latencies_s) * 1e3,
            self.simulated_latencies_s.len(),
            self.finn_latency_s * 1e3
        );
        for (name, lat, gbps) in &self.links {
            s.push_str(&format!(
                "modelled link {name}: {:.3} µs one way, {gbps:.2} Gbit/s payload\n",
                lat * 1e6
            ));
        }
        s
    }
}

pub(crate) fn min(v: &[f64]) -> f64 {
    v.iter().cloned().fold(f64::INFINITY, f64::min)
}

pub(crate) fn max(v: &[f64]) -> f64 {
    v.iter().cloned().fold(f64::NEG_INFINITY, f64::max)
}

/// Check that the run record belongs to the deployment: its name, its devices, its links.
pub fn check_run(
    run: &RunRecord,
    dep: &Deployment,
    topology: &serde_json::Value,
    run_path: &Path,
) -> Result<()> {
    if let Some(name) = topology["deployment"].as_str() {
        if name != run.deployment {
            bail!(
                "{}: a run of deployment {}, but the topology is {name}'s: pass the files of the deployment that ran",
                run_path.display(),
                run.deployment
            );
        }
    }
    for d in &run.devices {
        if !dep.plan.devices.iter().any(|p| p.name == d.name) {
            bail!(
                "{}: device {} is not in the deployment's plan",
                run_path.display(),
                d.name
            );
        }
    }
    let cables: Vec<String> = topology["links"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or(&[])
        .iter()
        .flat_map(|l| {
            let e = |x: &serde_json::Value| {
                format!(
                    "{}:{}",
                    x["device"].as_str().unwrap_or("?"),
                    x["port"].as_u64().unwrap_or(0)
                )
            };
            [
                format!("{}->{}", e(&l["a"]), e(&l["b"])),
                format!("{}->{}", e(&l["b"]), e(&l["a"])),
            ]
        })
        .collect();
    for l in &run.links {
        if !cables.contains(&l.name) {
            bail!(
                "{}: link {} is no cable of the topology (cables: {})",
                run_path.display(),
                l.name,
                cables.join(", ")
            );
        }
    }
    Ok(())
}

pub struct ReportPaths<'a> {
    pub run: &'a Path,
    pub plan: &'a Path,
    pub exec: &'a Path,
    pub topology: &'a Path,
    pub devices: Option<&'a Path>,
    pub out: &'a Path,
}

/// Read everything, render the page, write it atomically; returns the figures shown.
pub fn write_report(p: &ReportPaths) -> Result<Figures> {
    let run = RunRecord::read(p.run)?;
    let dep = perf_model::load(p.plan, p.exec, p.topology)?;
    let topology: serde_json::Value = perf_model::deployment::read_json(p.topology, "topology")?;
    check_run(&run, &dep, &topology, p.run)?;
    let budgets = p.devices.map(read_budgets).transpose()?;
    let frames = run.images.clamp(2, 10_000) as u32;
    let fig = figures(&dep, frames);
    let html = render(&run, &dep, budgets.as_ref(), &fig);
    write_atomic(p.out, html.as_bytes())?;
    Ok(fig)
}

pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("{}: cannot write here", dir.display()))?;
    std::io::Write::write_all(&mut tmp, bytes)
        .with_context(|| format!("{}: write", path.display()))?;
    tmp.persist(path)
        .with_context(|| format!("{}: cannot replace", path.display()))?;
    Ok(())
}

/// What `infer` calls once run.json is written: `report.html` beside it; returns its path
/// and the figures (print `summary()`).
pub fn report_beside_run(
    run: &Path,
    plan: &Path,
    exec: &Path,
    topology: &Path,
    devices: Option<&Path>,
) -> Result<(std::path::PathBuf, Figures)> {
    let out = run.with_file_name("report.html");
    let fig = write_report(&ReportPaths {
        run,
        plan,
        exec,
        topology,
        devices,
        out: &out,
    })?;
    Ok((out, fig))
}
