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
pub use run::{RunRecord, RunWhole};

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
    /// A replica deployment: every copy together (the figures above are one copy's).
    pub whole: Option<RunWhole>,
}

/// The fewest rounds (one image per copy each) the whole is simulated over: the rate is
/// taken over the second half, after every copy's pipeline has filled. A MobileNet-V1 copy
/// of the replica plan holds about 7 frames (2.7 ms through it, 0.4 ms a frame); over 8
/// rounds its second half is still 1 % slow, over 24 it is steady.
pub const WHOLE_MIN_ROUNDS: u64 = 24;

/// The whole of a replica deployment over as many rounds as `images` fill (at least
/// `WHOLE_MIN_ROUNDS`); None for a one-copy plan.
pub fn whole_figures(
    plan: &Path,
    exec: &Path,
    topology: &Path,
    images: u64,
) -> Result<Option<RunWhole>> {
    let Some(w) = perf_model::whole::load(plan, exec, topology)? else {
        return Ok(None);
    };
    let copies = w.copies.len() as u64;
    let rounds = images.div_ceil(copies).clamp(WHOLE_MIN_ROUNDS, 1000);
    let a = perf_model::analyse_whole(&w);
    let s = perf_model::simulate_whole(&w, rounds as u32);
    Ok(Some(RunWhole {
        copies,
        modelled_fps: a.fps,
        limit: a.limit,
        simulated_fps: s.fps,
        rounds: s.rounds as u64,
        first_latency_s: s.first_latency_s,
        host_link: w.host.name.clone(),
        host_link_gbytes_per_s: w.host.in_bytes_per_s / 1e9,
        plan_fps_total: w.plan_fps_total,
    }))
}

/// Model and simulate `frames` frames (at least 2) of the deployment (of one copy of a
/// replica deployment: `whole` is left to `whole_figures`).
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
        whole: None,
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
        if let Some(w) = &self.whole {
            s.push_str(&whole_summary(w));
        }
        s
    }
}

/// The whole's lines: modelled and simulated, beside the paper's and Elastic-DF's measured
/// MobileNet-V1 figures (paper/figures.toml).
fn whole_summary(w: &RunWhole) -> String {
    let p = paper::figures();
    let e = &p.elastic_df;
    let plan = w
        .plan_fps_total
        .map_or(String::new(), |t| format!("; the plan's fps_total {t:.0}"));
    format!(
        "modelled whole: {:.0} FPS ({} copies, round robin; bound by {}{plan})\n\
         simulated whole: {:.0} FPS ({} copies over {} rounds, results in input order; {} per card, \
         {:.2} GB/s each way), image 0 host to host {:.4} ms\n\
         beside: the paper {:.0} FPS (MobileNet-V1, one pipeline over 2 × U280); Elastic-DF {:.0} / \
         {:.0} / {:.0} FPS (1 CU; 2 CUs on one card; 3 CUs on two cards)\n",
        w.modelled_fps,
        w.copies,
        w.limit,
        w.simulated_fps,
        w.copies,
        w.rounds,
        w.host_link,
        w.host_link_gbytes_per_s,
        w.first_latency_s * 1e3,
        p.mobilenet_2fpga.fps,
        e.fps_1cu,
        e.fps_2cu_1card,
        e.fps_3cu_2cards
    )
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
    let (dep, fig) = deployment_figures(p.plan, p.exec, p.topology, run.images)?;
    let files = PageFiles {
        run: p.run,
        topology: p.topology,
        devices: p.devices,
        out: p.out,
    };
    write_page(&files, &dep, &fig)?;
    Ok(fig)
}

/// The deployment and its figures for a run of `images` images: one copy's (at least 2
/// frames) and, for a replica deployment, the whole's.
pub fn deployment_figures(
    plan: &Path,
    exec: &Path,
    topology: &Path,
    images: u64,
) -> Result<(Deployment, Figures)> {
    let dep = perf_model::load(plan, exec, topology)?;
    let mut fig = figures(&dep, images.clamp(2, 10_000) as u32);
    fig.whole = whole_figures(plan, exec, topology, images)?;
    Ok((dep, fig))
}

/// What the page reads besides the figures, and where it goes.
pub struct PageFiles<'a> {
    pub run: &'a Path,
    pub topology: &'a Path,
    pub devices: Option<&'a Path>,
    pub out: &'a Path,
}

/// The page of the run record at `p.run` with the deployment's figures, written atomically.
pub fn write_page(p: &PageFiles, dep: &Deployment, fig: &Figures) -> Result<()> {
    let run = RunRecord::read(p.run)?;
    let topology: serde_json::Value = perf_model::deployment::read_json(p.topology, "topology")?;
    check_run(&run, dep, &topology, p.run)?;
    let budgets = p.devices.map(read_budgets).transpose()?;
    let html = render(&run, dep, budgets.as_ref(), fig);
    write_atomic(p.out, html.as_bytes())
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

/// What `infer` calls once run.json is written: `report.html` beside it with the figures
/// `deployment_figures` gave; returns its path.
pub fn report_beside_run(
    run: &Path,
    topology: &Path,
    devices: Option<&Path>,
    dep: &Deployment,
    fig: &Figures,
) -> Result<std::path::PathBuf> {
    let out = run.with_file_name("report.html");
    let files = PageFiles {
        run,
        topology,
        devices,
        out: &out,
    };
    write_page(&files, dep, fig)?;
    Ok(out)
}
