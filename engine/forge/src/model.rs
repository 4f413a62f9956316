//! The data that crosses the three phases of a build.
//!
//! Loading (`interpreter`) turns BUCK files into [`TargetNode`]s with coerced attributes.
//! Analysis (`analysis`) runs rule implementations and yields providers plus an
//! [`ActionGraph`]. Execution (`exec`) runs the actions. Each phase only sees the types in
//! this file from the others, so they can evolve independently.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use starlark::values::OwnedFrozenValue;

pub use forge_core::*;

/// How a dependency attribute is configured (buck2's dep / exec_dep / toolchain_dep).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DepKind {
    Normal,
    Exec,
    Toolchain,
}

/// What analysis needs of loading (the loader, or a fixed set of nodes in tests): analysis
/// sees loading only through this trait, so it never imports the interpreter.
pub trait TargetSource {
    fn get_target(&self, label: &TargetLabel) -> anyhow::Result<Arc<TargetNode>>;
    /// The target platform a requested target is configured with (`None` = unspecified).
    fn target_platform(&self, _label: &TargetLabel) -> anyhow::Result<Option<TargetLabel>> {
        Ok(None)
    }
    /// `read_config` on the root cell, for `ConfigurationInfo.values`.
    fn config(&self, _section: &str, _key: &str) -> Option<String> {
        None
    }
}

/// The one check of a dependency edge against toolchain rules, with buck2's messages: a
/// toolchain rule is reachable only through `attrs.toolchain_dep()`, and only a toolchain
/// rule through it. Loading (`interpreter::checks`) and analysis both call it.
pub fn check_toolchain_edge(
    dep: &TargetLabel,
    kind: DepKind,
    dep_is_toolchain: bool,
) -> anyhow::Result<()> {
    match (kind, dep_is_toolchain) {
        (DepKind::Toolchain, false) => Err(anyhow::anyhow!(
            "Target `{dep}` was used as a toolchain_dep, but is not a toolchain rule"
        )),
        (DepKind::Normal | DepKind::Exec, true) => Err(anyhow::anyhow!(
            "Target `{dep}` was used not as a toolchain_dep, but is a toolchain rule"
        )),
        _ => Ok(()),
    }
}

/// The declared type of one rule attribute (`attrs.*`).
#[derive(Clone, Debug)]
pub enum AttrType {
    Any,
    String,
    Int,
    Bool,
    List(Box<AttrType>),
    Tuple(Vec<AttrType>),
    Dict {
        key: Box<AttrType>,
        value: Box<AttrType>,
        sorted: bool,
    },
    Option(Box<AttrType>),
    OneOf(Vec<AttrType>),
    /// Variants are stored lowercase; values are lowercased on coercion.
    Enum(Vec<String>),
    Source {
        allow_directory: bool,
    },
    Dep {
        kind: DepKind,
        /// Provider callables the dep must return (checked at analysis).
        providers: Vec<OwnedFrozenValue>,
    },
    Label,
    Arg,
}

#[derive(Clone, Debug)]
pub struct AttrSpec {
    pub ty: AttrType,
    /// `None` = mandatory.
    pub default: Option<CoercedAttr>,
    pub default_only: bool,
    pub doc: String,
}

/// An attribute value after coercion against its [`AttrType`], before configuration.
#[derive(Clone, Debug, PartialEq)]
pub enum CoercedAttr {
    None,
    Bool(bool),
    Int(i64),
    String(String),
    List(Vec<CoercedAttr>),
    Tuple(Vec<CoercedAttr>),
    Dict(Vec<(CoercedAttr, CoercedAttr)>),
    Dep {
        label: ProvidersLabel,
        kind: DepKind,
    },
    /// A source file, path relative to the project root (e.g. `hw/aurora_flow/rtl/x.sv`);
    /// `package_relative` is what `short_path` returns.
    SourceFile {
        project_path: String,
        package_relative: String,
    },
    /// `attrs.source()` given a target label: its default outputs are the sources.
    SourceDep(ProvidersLabel),
    Label(ProvidersLabel),
    /// `attrs.arg()`: the raw string with `$(location ...)`/`$(exe ...)` macros, and the
    /// labels those macros reference (so they are deps).
    Arg {
        raw: String,
        macro_deps: Vec<ProvidersLabel>,
    },
    /// `select({...})`: keys are `cell//pkg:name` config setting labels or `"DEFAULT"`.
    Select(Vec<(String, CoercedAttr)>),
    /// `a + select(...)`.
    Concat(Vec<CoercedAttr>),
}

impl CoercedAttr {
    /// Every label this value depends on (deps, source deps, arg macros, select branches).
    pub fn visit_deps(&self, f: &mut dyn FnMut(&ProvidersLabel, Option<DepKind>)) {
        match self {
            CoercedAttr::Dep { label, kind } => f(label, Some(*kind)),
            CoercedAttr::SourceDep(label) => f(label, Some(DepKind::Normal)),
            CoercedAttr::Arg { macro_deps, .. } => {
                for l in macro_deps {
                    f(l, Some(DepKind::Normal));
                }
            }
            CoercedAttr::List(xs) | CoercedAttr::Tuple(xs) | CoercedAttr::Concat(xs) => {
                for x in xs {
                    x.visit_deps(f);
                }
            }
            CoercedAttr::Dict(kvs) => {
                for (k, v) in kvs {
                    k.visit_deps(f);
                    v.visit_deps(f);
                }
            }
            CoercedAttr::Select(branches) => {
                for (_, v) in branches {
                    v.visit_deps(f);
                }
            }
            CoercedAttr::Label(_)
            | CoercedAttr::None
            | CoercedAttr::Bool(_)
            | CoercedAttr::Int(_)
            | CoercedAttr::String(_)
            | CoercedAttr::SourceFile { .. } => {}
        }
    }
}

/// What `rule(...)` declared, shared by all targets of that rule.
#[derive(Debug)]
pub struct RuleSpec {
    /// The variable the rule was assigned to, e.g. `cargo_binary`.
    pub name: String,
    /// The .bzl that defined it, e.g. `root//rules:cargo.bzl`.
    pub defined_in: String,
    pub implementation: OwnedFrozenValue,
    pub attrs: BTreeMap<String, AttrSpec>,
    pub is_toolchain_rule: bool,
    pub is_configuration_rule: bool,
    pub doc: String,
}

/// One target as declared in a BUCK file.
#[derive(Debug)]
pub struct TargetNode {
    pub label: TargetLabel,
    pub rule: Arc<RuleSpec>,
    /// Every declared attribute, defaults filled in, in name order.
    pub attrs: BTreeMap<String, CoercedAttr>,
    pub visibility: Vec<String>,
    /// `path/BUCK:line:col` of the rule call, for error messages.
    pub call_site: String,
}

impl TargetNode {
    /// Deps of this node in attribute order, each label once.
    pub fn deps(&self) -> Vec<(ProvidersLabel, DepKind)> {
        let mut out: Vec<(ProvidersLabel, DepKind)> = Vec::new();
        for v in self.attrs.values() {
            v.visit_deps(&mut |l, k| {
                if let Some(k) = k {
                    if !out.iter().any(|(x, _)| x == l) {
                        out.push((l.clone(), k));
                    }
                }
            });
        }
        out
    }
}

/// All targets of one BUCK file.
#[derive(Debug)]
pub struct Package {
    pub cell: String,
    pub path: String,
    /// Project-relative path of the build file.
    pub buildfile: PathBuf,
    pub targets: indexmap::IndexMap<String, Arc<TargetNode>>,
}
