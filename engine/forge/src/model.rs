//! The data that crosses the three phases of a build.
//!
//! Loading (`interpreter`) turns BUCK files into [`TargetNode`]s with coerced attributes.
//! Analysis (`analysis`) runs rule implementations and yields providers plus an
//! [`ActionGraph`]. Execution (`exec`) runs the actions. Each phase only sees the types in
//! this file from the others, so they can evolve independently.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use starlark::values::OwnedFrozenValue;

/// `cell//package:name` — an unconfigured target.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TargetLabel {
    pub cell: String,
    /// Package path inside the cell, `""` for the cell root, never with a trailing `/`.
    pub package: String,
    pub name: String,
}

impl fmt::Display for TargetLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}//{}:{}", self.cell, self.package, self.name)
    }
}

/// A target plus an optional chain of sub-targets: `root//x:y[a][b]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ProvidersLabel {
    pub target: TargetLabel,
    pub sub_target: Vec<String>,
}

impl fmt::Display for ProvidersLabel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.target)?;
        for s in &self.sub_target {
            write!(f, "[{s}]")?;
        }
        Ok(())
    }
}

/// How a dependency attribute is configured (buck2's dep / exec_dep / toolchain_dep).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum DepKind {
    Normal,
    Exec,
    Toolchain,
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

// ---------------------------------------------------------------------------------------
// Actions

/// A file the build reads or produces, always named by its project-relative path.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum ArtifactRef {
    /// A file in the source tree, e.g. `hw/aurora_flow/rtl/fifo.sv` (or `./top.txt` as buck2
    /// renders root-package sources: the path here is the clean `top.txt`).
    Source(String),
    /// A declared output under `buck-out/forge/art/...`.
    Build(String),
}

impl ArtifactRef {
    pub fn path(&self) -> &str {
        match self {
            ArtifactRef::Source(p) | ArtifactRef::Build(p) => p,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ActionId(pub usize);

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OutputDecl {
    /// Project-relative path under `buck-out/forge/art/...`.
    pub path: String,
    /// `declare_output(dir = True)`.
    pub is_dir: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub enum ActionKind {
    Run {
        /// Fully rendered argv, paths project-relative (cwd = project root).
        argv: Vec<String>,
        /// The explicit `env`, sorted by name.
        env: Vec<(String, String)>,
        local_only: bool,
        prefer_local: bool,
        /// `None` = `[buck2] default_allow_cache_upload`.
        allow_cache_upload: Option<bool>,
        weight: u32,
        /// Scratch dir exported as BUCK_SCRATCH_PATH, project-relative.
        scratch: String,
    },
    /// `ctx.actions.write` / `write_json`: content is known at analysis time.
    Write {
        content: Vec<u8>,
        is_executable: bool,
    },
    /// `ctx.actions.copy_file`.
    Copy { src: ArtifactRef },
    /// `ctx.actions.symlinked_dir`: relative path inside the dir -> artifact.
    SymlinkedDir { entries: Vec<(String, ArtifactRef)> },
    /// `ctx.actions.copied_dir`.
    CopiedDir { entries: Vec<(String, ArtifactRef)> },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Action {
    pub id: ActionId,
    /// `root//pkg:name` of the target whose analysis declared the action.
    pub owner: TargetLabel,
    pub category: String,
    pub identifier: Option<String>,
    pub kind: ActionKind,
    /// Every artifact the action reads, sources and build outputs alike.
    pub inputs: Vec<ArtifactRef>,
    pub outputs: Vec<OutputDecl>,
}

impl Action {
    /// `root//pkg:name (category identifier)`, the form buck2 prints in `Action failed:`.
    pub fn display_name(&self) -> String {
        match &self.identifier {
            Some(id) => format!("{} ({} {})", self.owner, self.category, id),
            None => format!("{} ({})", self.owner, self.category),
        }
    }

    pub fn is_command(&self) -> bool {
        matches!(self.kind, ActionKind::Run { .. })
    }
}

/// Every action declared by the analysed targets, and which action produces each output.
#[derive(Default, Debug, Clone)]
pub struct ActionGraph {
    pub actions: Vec<Action>,
    /// Output path (file or declared dir) -> producing action.
    pub producers: BTreeMap<String, ActionId>,
}

impl ActionGraph {
    pub fn producer_of(&self, artifact: &ArtifactRef) -> Option<&Action> {
        match artifact {
            ArtifactRef::Source(_) => None,
            ArtifactRef::Build(p) => self.producers.get(p).map(|id| &self.actions[id.0]),
        }
    }
}

// ---------------------------------------------------------------------------------------
// What the CLI asks of an analysed target

/// A runnable command (`RunInfo`, or the command of `ExternalRunnerTestInfo`).
#[derive(Clone, Debug, Default)]
pub struct CommandSpec {
    /// Project-relative rendering (what buck2 passes to tests).
    pub argv: Vec<String>,
    /// Same args with artifact paths made absolute (what `buck2 run` passes).
    pub argv_absolute: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Artifacts that must be built before the command runs.
    pub inputs: Vec<ArtifactRef>,
}

#[derive(Clone, Debug)]
pub struct TestSpec {
    pub label: ProvidersLabel,
    pub test_type: String,
    pub command: CommandSpec,
    pub labels: Vec<String>,
}

/// The outputs and runnable parts of one `//pkg:name[sub]`.
#[derive(Clone, Debug, Default)]
pub struct TargetOutputs {
    pub default_outputs: Vec<ArtifactRef>,
    pub other_outputs: Vec<ArtifactRef>,
    pub run: Option<CommandSpec>,
    pub test: Option<TestSpec>,
}
