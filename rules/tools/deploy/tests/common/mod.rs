#![allow(dead_code)]
//! Paths of the project's files the tests read (tests run from the crate directory, which is
//! rules/tools/deploy under both `cargo test` and `forge test`).

use std::path::PathBuf;
use std::process::{Command, Output};

pub fn root() -> PathBuf {
    let here = std::env::current_dir().unwrap();
    let root = here.join("../../..");
    assert!(
        root.join("deploy").is_dir(),
        "run from rules/tools/deploy (cwd {})",
        here.display()
    );
    root
}

pub fn platform() -> PathBuf {
    root().join("toolchains/fpga_platforms/xilinx_u280_gen3x16_xdma_1_202211_1.toml")
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

pub fn plan() -> PathBuf {
    PathBuf::from("tests/data/mobilenet_2fpga_plan.json")
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
