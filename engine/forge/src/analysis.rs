//! Analysis: runs rule implementations (`ctx`, `ctx.actions`, `cmd_args`, artifacts,
//! providers) and collects the [`crate::model::ActionGraph`].

pub mod actions;
pub mod analyzer;
pub mod artifact;
pub mod attrs;
pub mod cmd_args;
pub mod configuration;
pub mod context;
pub mod execution_platform;
mod globals;
pub mod label;
pub mod outputs;
pub mod providers;
pub mod write_json;

use starlark::environment::GlobalsBuilder;

pub use analyzer::Analyzer;

/// Analysis-time globals: `provider`, `provider_field`, `DefaultInfo`, `RunInfo`,
/// `ExternalRunnerTestInfo`, the configuration providers, `cmd_args`, and the type names
/// rule files use in annotations (`AnalysisContext`, `Artifact`, ...).
pub fn register_globals(builder: &mut GlobalsBuilder) {
    providers::register_provider_globals(builder);
    globals::analysis_functions(builder);
}

#[cfg(test)]
mod tests;
