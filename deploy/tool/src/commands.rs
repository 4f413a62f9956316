//! The subcommands: read the inputs, check everything, and only then write the outputs.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use cluster_file::Cluster;
use serde_json::Value;

use crate::deployment::{App, Deployment};
use crate::diag::{write_all, write_atomic};
use crate::instances::{self, Inputs};
use crate::kernel::Kernel;
use crate::plan::{self, Plan};
use crate::platform::Platform;
use crate::scripts::{self, Launch};
use crate::{flow_control, linkcfg, partitioner, report, validate};

pub fn load(deployment: &Path, platform: &Path) -> Result<(Deployment, Platform)> {
    let p = crate::platform::load(platform)?;
    let d = Deployment::load(deployment, &p)?;
    Ok((d, p))
}

fn json(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap() + "\n"
}

pub fn check(
    deployment: &Path,
    platform: &Path,
    target: &Target,
    plan: Option<&Path>,
    stamp: Option<&Path>,
) -> Result<()> {
    let (d, _) = load(deployment, platform)?;
    if let Some(name) = target.name {
        d.check_name(name)?;
    }
    d.check_device_list(target.devices)?;
    // with a plan: its devices are these and every cut has a cable
    cuts_of(&d, plan)?;
    let summary = format!(
        "{}: {} device(s), {} cable(s): ok",
        d.src.path,
        d.devices.len(),
        d.links.len()
    );
    eprintln!("{summary}");
    match stamp {
        Some(path) => write_all(&[(path, summary + "\n")]),
        None => Ok(()),
    }
}

/// What the BUCK target says the description must be: its name (the `fpga_deployment`'s)
/// and its device list.
pub struct Target<'a> {
    pub name: Option<&'a str>,
    pub devices: &'a [String],
}

pub fn partitioner_inputs(
    deployment: &Path,
    platform: &Path,
    devices_out: &Path,
    topology_out: &Path,
) -> Result<()> {
    let (d, p) = load(deployment, platform)?;
    write_all(&[
        (devices_out, json(&partitioner::devices_json(&d, &p))),
        (topology_out, json(&partitioner::topology_json(&d))),
    ])
}

pub fn plan_slice(plan: &Path, device: &str, out: &Path) -> Result<()> {
    let slice = plan::device_slice(&Plan::load(plan)?, device)?;
    write_all(&[(out, json(&slice))])
}

pub struct LinkConfigArgs<'a> {
    pub deployment: &'a Path,
    pub platform: &'a Path,
    pub device: &'a str,
    pub kernels: &'a [PathBuf],
    pub plan: Option<&'a Path>,
    pub flow_control: Option<&'a Path>,
    pub finn_model: Option<&'a str>,
    pub cfg_out: &'a Path,
    pub sim_out: &'a Path,
}

/// The checked design and its two renderings (cfg text, sim JSON), without writing.
pub fn link_config_text(a: &LinkConfigArgs) -> Result<(String, Value, validate::Checked)> {
    let (d, p) = load(a.deployment, a.platform)?;
    let kernels = a
        .kernels
        .iter()
        .map(|k| Kernel::load(k))
        .collect::<Result<Vec<_>>>()?;
    let plan = a.plan.map(Plan::load).transpose()?;
    let fc = a.flow_control.map(flow_control::load).transpose()?;
    let design = instances::design(&Inputs {
        dep: &d,
        platform: &p,
        device: a.device,
        kernels: &kernels,
        plan: plan.as_ref(),
        finn_model: a.finn_model.map(str::to_string),
    })?;
    let checked = validate::check(&design, &d, &p, plan.as_ref(), fc.as_ref())?;
    let cfg = linkcfg::render_cfg(&design, &d, &p);
    let sim = serde_json::to_value(linkcfg::sim_description(&design, &checked, &d, &p))?;
    Ok((cfg, sim, checked))
}

pub fn link_config(a: &LinkConfigArgs) -> Result<()> {
    let (cfg, sim, checked) = link_config_text(a)?;
    for n in &checked.notes {
        eprintln!("note: {n}");
    }
    write_all(&[(a.cfg_out, cfg), (a.sim_out, json(&sim))])
}

pub struct ScriptArgs<'a> {
    pub deployment: &'a Path,
    pub platform: &'a Path,
    /// The cluster file (toolchains/clusters/<name>.toml) the job script is for.
    pub cluster: &'a Path,
    pub xclbins: &'a [String],
    pub host: &'a str,
    pub plan: Option<&'a Path>,
    /// The partition plan's executor export (exec.json, whole/): `infer`'s reference.
    pub finn_exec: Option<&'a str>,
    /// The partitioner's devices.json: the run report's utilisation budgets.
    pub devices_json: Option<&'a str>,
    /// The devices' sim descriptions: app hls lists their memory banks in the topology.
    pub sims: &'a [PathBuf],
    pub job_out: &'a Path,
    pub run_out: &'a Path,
    pub topology_out: &'a Path,
}

pub fn parse_xclbins(d: &Deployment, given: &[String]) -> Result<Vec<(String, String)>> {
    let mut map = std::collections::BTreeMap::new();
    for x in given {
        let (dev, path) = x
            .split_once('=')
            .with_context(|| format!("--xclbin '{x}' is not DEVICE=PATH"))?;
        if d.device(dev).is_none() {
            anyhow::bail!(
                "--xclbin {x}: device {dev} is not in {} (devices: {})",
                d.src.path,
                d.device_names().join(", ")
            );
        }
        if map.insert(dev.to_string(), path.to_string()).is_some() {
            anyhow::bail!("--xclbin names device {dev} twice");
        }
    }
    d.devices
        .iter()
        .map(|dev| {
            map.get(&dev.name)
                .map(|p| (dev.name.clone(), p.clone()))
                .with_context(|| {
                    format!(
                        "no --xclbin for device {} (rank order needs every device)",
                        dev.name
                    )
                })
        })
        .collect()
}

fn cuts_of(d: &Deployment, plan: Option<&Path>) -> Result<(Option<Plan>, Vec<plan::CutOnCable>)> {
    match plan {
        Some(p) => {
            let plan = Plan::load(p)?;
            plan.check_devices(d)?;
            let cuts = plan::map_cuts(d, &plan)?;
            Ok((Some(plan), cuts))
        }
        None => Ok((None, Vec::new())),
    }
}

/// The cluster file, read and held against the description: no node of it may carry more
/// cards than the cluster's nodes have.
pub fn load_cluster(file: &Path, d: &Deployment) -> Result<Cluster> {
    let c = Cluster::read(file)?;
    if let Some((n, line)) = c.job.cards_per_node {
        if d.cards_per_node > n {
            return Err(d.src.at(
                &d.cards_span,
                format!(
                    "cards_per_node = {} but a node of cluster {} has {n} cards ({}:{line}); \
                     spread the devices over more nodes (cards_per_node = {n} or fewer)",
                    d.cards_per_node, c.name, c.file
                ),
            ));
        }
    }
    Ok(c)
}

pub fn scripts_text(a: &ScriptArgs) -> Result<(String, String, Value)> {
    let (d, p) = load(a.deployment, a.platform)?;
    let cluster = load_cluster(a.cluster, &d)?;
    let xclbins = parse_xclbins(&d, a.xclbins)?;
    let (plan, cuts) = cuts_of(&d, a.plan)?;
    let topo_path = a.topology_out.display().to_string();
    let plan_path = a.plan.map(|p| p.display().to_string());
    let job_path = a.job_out.display().to_string();
    let launch = Launch {
        root: scripts::Root::Project,
        host: a.host,
        xclbins: &xclbins,
        topology: &topo_path,
        job: &job_path,
        reference: a.finn_exec,
        plan: plan_path.as_deref(),
        devices: a.devices_json,
    };
    let mut topology = scripts::topology(&d, &p, &cuts);
    if let Some(plan) = plan.filter(crate::replicas::is_replica_plan) {
        topology["replicas"] = crate::replicas::topology(&plan);
    }
    if d.app == App::Hls {
        crate::hls_app::assigned_banks(&mut topology, &read_sims(a.sims)?);
    }
    Ok((
        scripts::job_script(&d, &p, &launch, &cluster),
        scripts::run_script(&d, &p, &launch),
        topology,
    ))
}

pub fn scripts(a: &ScriptArgs) -> Result<()> {
    let (job, run, topo) = scripts_text(a)?;
    write_all(&[
        (a.job_out, job),
        (a.run_out, run),
        (a.topology_out, json(&topo)),
    ])?;
    for p in [a.job_out, a.run_out] {
        make_executable(p)?;
    }
    Ok(())
}

fn make_executable(p: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    let mut perm = std::fs::metadata(p)?.permissions();
    perm.set_mode(0o755);
    std::fs::set_permissions(p, perm).with_context(|| format!("chmod {}", p.display()))
}

fn read_sims(sims: &[PathBuf]) -> Result<Vec<Value>> {
    sims.iter()
        .map(|s| {
            let text = std::fs::read_to_string(s)
                .with_context(|| format!("{}: cannot read", s.display()))?;
            serde_json::from_str::<Value>(&text)
                .with_context(|| format!("{}: not a sim device description", s.display()))
        })
        .collect()
}

pub fn report_text(
    deployment: &Path,
    platform: &Path,
    plan: Option<&Path>,
    sims: &[PathBuf],
) -> Result<String> {
    let (d, p) = load(deployment, platform)?;
    if d.app == App::Finn && plan.is_none() {
        eprintln!(
            "note: {}: no --plan, so the report has no cuts or utilisation",
            d.src.path
        );
    }
    let (plan, cuts) = cuts_of(&d, plan)?;
    let sims = read_sims(sims)?;
    Ok(report::render(&d, &p, plan.as_ref(), &cuts, &sims))
}

pub fn report(
    deployment: &Path,
    platform: &Path,
    plan: Option<&Path>,
    sims: &[PathBuf],
    out: &Path,
) -> Result<()> {
    let html = report_text(deployment, platform, plan, sims)?;
    write_atomic(out, &html)
}
