//! Loading: `.buckconfig`, cells, `load()`, BUCK and .bzl evaluation, `rule()`, `attrs.*`,
//! attribute coercion, target patterns. Produces [`crate::model::Package`]s.
//! (Interface stub: the bodies are filled in by the loader implementation.)

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::Result;
use starlark::environment::Globals;

use crate::model::{Package, ProvidersLabel, TargetLabel, TargetNode};

/// The project root, its merged buckconfig (files + `-c` overrides) and its cells.
pub struct Workspace {
    pub root: PathBuf,
}

impl Workspace {
    /// Finds the project root above `cwd` (`.buckroot` / outermost `.buckconfig`) and applies
    /// `-c section.key=value` overrides (a malformed override is an error).
    pub fn discover(_cwd: &std::path::Path, _overrides: &[String]) -> Result<Workspace> {
        unimplemented!()
    }

    /// `read_config(section, key)` on the root cell.
    pub fn config(&self, _section: &str, _key: &str) -> Option<String> {
        unimplemented!()
    }

    /// All `key = value` pairs of one section of the root cell's config.
    pub fn config_section(&self, _section: &str) -> std::collections::BTreeMap<String, String> {
        unimplemented!()
    }

    /// Directory of a cell, project-relative (`""` for root).
    pub fn cell_path(&self, _cell: &str) -> Result<String> {
        unimplemented!()
    }
}

/// Evaluates build files on demand and caches the results.
pub struct Loader {}

impl Loader {
    pub fn new(_ws: Arc<Workspace>) -> Result<Loader> {
        unimplemented!()
    }
    pub fn workspace(&self) -> &Workspace {
        unimplemented!()
    }
    /// The globals BUCK and .bzl files see (also used to evaluate rule implementations).
    pub fn globals(&self) -> &Globals {
        unimplemented!()
    }
    pub fn load_package(&self, _cell: &str, _package: &str) -> Result<Arc<Package>> {
        unimplemented!()
    }
    pub fn get_target(&self, _label: &TargetLabel) -> Result<Arc<TargetNode>> {
        unimplemented!()
    }
    /// Expands `//pkg:name`, `//pkg:`, `//pkg/...`, `cell//...`, `:name`, `x[sub]`
    /// relative to `cwd_package` (the package the user stands in).
    pub fn resolve_patterns(
        &self,
        _patterns: &[String],
        _cwd_package: &str,
    ) -> Result<Vec<ProvidersLabel>> {
        unimplemented!()
    }
}
