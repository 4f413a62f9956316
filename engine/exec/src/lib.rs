//! forge execution: scheduling, the per-action sandbox, local CAS + action cache, the remote
//! cache, the build log (`forge log what-ran`) and the test runner.
//! (Interface stub: the bodies are filled in by the executor implementation.)

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;

use forge_core::{ActionGraph, ArtifactRef, TestSpec};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RemoteMode {
    Off,
    Read,
    ReadWrite,
}

pub struct ExecOptions {
    pub project_root: PathBuf,
    pub jobs: usize,
    pub remote: Option<Arc<dyn forge_reapi::RemoteCache>>,
    pub remote_mode: RemoteMode,
    /// `[buck2] default_allow_cache_upload`.
    pub default_allow_cache_upload: bool,
}

#[derive(Debug, Default)]
pub struct BuildReport {
    /// Run actions executed locally.
    pub local: usize,
    /// Run actions served from the local cache.
    pub cached: usize,
    /// Run actions served from the remote cache.
    pub remote: usize,
}

pub struct Executor {}

impl Executor {
    pub fn new(_opts: ExecOptions) -> Result<Executor> {
        unimplemented!()
    }
    /// Builds `wanted` and everything they need; errors name the failing action.
    pub fn build(&self, _graph: &ActionGraph, _wanted: &[ArtifactRef]) -> Result<BuildReport> {
        unimplemented!()
    }
}

#[derive(Debug, Default)]
pub struct TestSummary {
    pub passed: usize,
    pub failed: usize,
}

/// Runs the tests in parallel (after building their inputs) and prints per-test results.
pub fn run_tests(
    _exec: &Executor,
    _graph: &ActionGraph,
    _tests: Vec<TestSpec>,
) -> Result<TestSummary> {
    unimplemented!()
}

/// `forge log what-ran`: the last build's actions, executor, and changed inputs.
pub fn what_ran(_project_root: &std::path::Path) -> Result<String> {
    unimplemented!()
}
