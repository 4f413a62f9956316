//! Analysis: runs rule implementations (`ctx`, `ctx.actions`, `cmd_args`, artifacts,
//! providers) and collects the [`crate::model::ActionGraph`].
//! (Interface stub: the bodies are filled in by the analysis implementation.)

use std::sync::Arc;

use anyhow::Result;
use starlark::environment::GlobalsBuilder;

use crate::interpreter::Loader;
use crate::model::{ActionGraph, ProvidersLabel, TargetOutputs};

/// Analysis-time globals: `provider`, `DefaultInfo`, `RunInfo`, `ExternalRunnerTestInfo`,
/// `cmd_args`, type names (`AnalysisContext`, `Artifact`, ...).
pub fn register_globals(_builder: &mut GlobalsBuilder) {}

pub struct Analyzer {}

impl Analyzer {
    pub fn new(_loader: Arc<Loader>) -> Analyzer {
        unimplemented!()
    }
    /// Analyses the target (and its deps, reporting cycles) and returns what it offers.
    pub fn outputs(&self, _label: &ProvidersLabel) -> Result<TargetOutputs> {
        unimplemented!()
    }
    /// Every action declared by the targets analysed so far.
    pub fn action_graph(&self) -> ActionGraph {
        unimplemented!()
    }
}
