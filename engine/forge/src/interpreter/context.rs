//! What the natives of a file's evaluation reach through `eval.extra`: the loader, the
//! file being evaluated and, in a build file, the package its targets go into. Below
//! `eval` (which runs the evaluation), `rule`, `attrs`, `coerce` and `globals` (whose
//! natives read it).

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use anyhow::anyhow;
use starlark::eval::Evaluator;
use starlark::values::ProvidesStaticType;

use super::Loader;
use crate::model::TargetNode;

/// The package a build file evaluation is declaring targets into.
pub struct PackageState {
    pub cell: String,
    pub package: String,
    /// Project-relative path of the build file.
    pub buildfile: String,
    pub targets: RefCell<indexmap::IndexMap<String, Arc<TargetNode>>>,
    /// `default_target_platform` of the targets that set it.
    pub platforms: RefCell<HashMap<String, crate::model::TargetLabel>>,
}

/// Reached by natives through `eval.extra`.
#[derive(ProvidesStaticType)]
pub struct BuildContext<'a> {
    pub loader: &'a Loader,
    /// Cell and cell-relative path of the file being evaluated.
    pub file_cell: String,
    pub file_path: String,
    /// `Some` while a build file is evaluated (also inside the macros it calls).
    pub package: Option<PackageState>,
}

impl<'a> BuildContext<'a> {
    pub fn from_eval<'e>(eval: &'e Evaluator) -> starlark::Result<&'e BuildContext<'e>> {
        eval.extra
            .and_then(|e| e.downcast_ref::<BuildContext>())
            .ok_or_else(|| {
                starlark::Error::new_other(anyhow!(
                    "This function can only be called while loading (in a build file, or at the \
                     top level of a .bzl), not from a rule implementation during analysis; pass \
                     the value to the rule through an attribute instead"
                ))
            })
    }

    /// Cell-relative directory of the file being evaluated.
    pub fn file_dir(&self) -> String {
        match self.file_path.rsplit_once('/') {
            Some((d, _)) => d.to_owned(),
            None => String::new(),
        }
    }

    /// The cell whose config `read_config` reads: the package's during BUCK evaluation.
    pub fn config_cell(&self) -> &str {
        self.package
            .as_ref()
            .map(|p| p.cell.as_str())
            .unwrap_or(&self.file_cell)
    }
}
