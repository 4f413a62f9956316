//! Types shared by every phase of a forge build: labels, the action graph, and what a
//! target offers to `build`, `run` and `test`. No Starlark here, so the executor can be
//! built and tested on its own.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

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
    /// The configuration the test was analysed in, as buck2 prints it after the label
    /// (`<unspecified>` or `root//platforms:p#<hash>`).
    pub configuration: String,
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
