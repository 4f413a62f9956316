#![allow(dead_code)]
//! Paths of the project's files the tests read (tests run from the crate directory, which is
//! deploy/tool under both `cargo test` and `forge test`).

use std::path::PathBuf;
use std::process::{Command, Output};

pub fn root() -> PathBuf {
    let here = std::env::current_dir().unwrap();
    let root = here.join("../..");
    assert!(
        root.join("deploy").is_dir(),
        "run from deploy/tool (cwd {})",
        here.display()
    );
    root
}

pub fn platform() -> PathBuf {
    root().join("toolchains/fpga_platforms/xilinx_u280_gen3x16_xdma_1_202211_1.toml")
}

/// A cluster file of the project (toolchains/clusters/<name>.toml).
pub fn cluster(name: &str) -> PathBuf {
    root().join(format!("toolchains/clusters/{name}.toml"))
}

pub fn deployment(name: &str) -> PathBuf {
    root().join(format!("deploy/{name}.toml"))
}

pub fn kernel(name: &str) -> PathBuf {
    PathBuf::from(format!("tests/data/kernels/{name}.json"))
}

pub fn kernels(names: &[&str]) -> Vec<PathBuf> {
    names.iter().map(|n| kernel(n)).collect()
}

pub fn all_kernels() -> Vec<PathBuf> {
    kernels(&[
        "aurora_flow_0",
        "aurora_flow_1",
        "send",
        "recv",
        "forward",
        "dma_in",
        "dma_out",
        "dma_out_w16",
        "tie_off_sink",
        "tie_off_source",
    ])
}

pub fn kernel_toml() -> PathBuf {
    root().join("hw/aurora_flow/kernel.toml")
}

/// MobileNet-V1 over deploy/mobilenet_2fpga.toml's two cards, as the partitioner plans it
/// today: its inputs are what `partitioner-inputs` makes of the description and the
/// MobileNet-V1 estimates the partitioner's own tests use, its options those of
/// `//deploy:mobilenet_2fpga` (throughput) and `finn-partition`'s defaults. Solved once per
/// test binary, so a change to the partitioner reaches these tests instead of a stale copy.
pub fn plan_text() -> &'static str {
    static PLAN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PLAN.get_or_init(|| make_plan(None))
}

/// The same inputs with `replicas = "auto"` (`//deploy:mobilenet_2fpga_replicas`): the
/// partitioner's replica plan.
pub fn replica_plan_text() -> &'static str {
    static PLAN: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    PLAN.get_or_init(|| make_plan(Some(finn_partitioner::Replicas::Auto)))
}

pub fn plan_json() -> serde_json::Value {
    serde_json::from_str(plan_text()).unwrap()
}

/// The plan in a file of its own, removed with the value (tests leave nothing behind).
pub struct PlanFile {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl std::ops::Deref for PlanFile {
    type Target = std::path::Path;
    fn deref(&self) -> &std::path::Path {
        &self.path
    }
}

impl AsRef<std::path::Path> for PlanFile {
    fn as_ref(&self) -> &std::path::Path {
        &self.path
    }
}

pub fn plan() -> PlanFile {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "mobilenet_2fpga_plan.json", plan_text());
    PlanFile { _dir: dir, path }
}

fn make_plan(replicas: Option<finn_partitioner::Replicas>) -> String {
    use finn_partitioner::{devices, estimates, topology, Objective, Options};
    let (dep, plat) =
        deploy_tool::commands::load(&deployment("mobilenet_2fpga"), &platform()).unwrap();
    let devices_json = deploy_tool::partitioner::devices_json(&dep, &plat);
    let devs: Vec<devices::DeviceSpec> = serde_json::from_value(devices_json["devices"].clone())
        .expect("the partitioner reads devices.json");
    let devs = devices::resolve_all(&devs).unwrap();
    let topo: topology::Topology =
        serde_json::from_value(deploy_tool::partitioner::topology_json(&dep)).unwrap();
    let est = estimates::Estimates::load(
        &root().join("finn/partitioner/tests/data/mobilenet_v1_estimates.json"),
    )
    .unwrap();
    let opts = Options {
        objective: Objective::Throughput,
        replicas,
        slrs: finn_partitioner::slr::from_devices_json(&devices_json).unwrap(),
        ..Options::default()
    };
    let plan = finn_partitioner::partition(&est, &devs, &topo, &opts).expect("partitions");
    serde_json::to_string_pretty(&plan).unwrap()
}

/// The plan's (first) cut as error messages name it: `FROM_LAYER -> TO_LAYER`.
pub fn plan_cut() -> String {
    let plan = plan_json();
    let cut = &plan["cuts"][0];
    format!(
        "{} -> {}",
        cut["from_layer"].as_str().unwrap(),
        cut["to_layer"].as_str().unwrap()
    )
}

/// A deployment file written into `dir` (for the cases no example deployment covers).
pub fn write(dir: &std::path::Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

pub fn tool(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_deploy-tool"))
        .args(args)
        .output()
        .expect("runs deploy-tool")
}

/// The lines of a v++ config section, without comments and blank lines.
pub fn section(cfg: &str, name: &str) -> Vec<String> {
    let mut inside = false;
    let mut out = Vec::new();
    for l in cfg.lines().map(str::trim) {
        if l.starts_with('[') {
            inside = l == format!("[{name}]");
        } else if inside && !l.is_empty() && !l.starts_with('#') {
            out.push(l.to_string());
        }
    }
    out
}
