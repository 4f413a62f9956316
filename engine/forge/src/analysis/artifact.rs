//! Artifacts: source files and declared outputs (`Artifact`), and the write handle
//! `.as_output()` gives (`OutputArtifact`).

use std::hash::Hash;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use allocative::Allocative;
use derive_more::Display;
use starlark::any::ProvidesStaticType;
use starlark::environment::{Methods, MethodsBuilder};
use starlark::starlark_module;
use starlark::starlark_simple_value;
use starlark::values::none::NoneOr;
use starlark::values::{starlark_value, Heap, NoSerialize, StarlarkValue, StringValue, Value};
use starlark_map::StarlarkHasher;

use super::label::{ConfiguredLabel, StarlarkLabel};
use crate::model::ArtifactRef;

#[derive(Debug, thiserror::Error)]
enum ArtifactError {
    #[error("Source artifact `{0}` cannot be bound: `as_output()` only applies to artifacts declared with `ctx.actions.declare_output`")]
    SourceAsOutput(String),
    #[error("Artifact `{0}` is already bound to an action; an artifact can be the output of only one action")]
    AlreadyBound(String),
    #[error("Projected artifact `{0}` cannot be bound: bind the artifact it was projected from")]
    ProjectedAsOutput(String),
    #[error("Projected path `{0}` must be a relative path without `..` or empty segments")]
    BadProjection(String),
}

#[derive(Debug, Clone)]
pub enum ArtifactKind {
    Source,
    Build {
        owner: ConfiguredLabel,
        is_dir: bool,
    },
}

#[derive(Debug)]
pub struct ArtifactData {
    pub kind: ArtifactKind,
    /// Clean project-relative path (`top.txt`, `buck-out/forge/art/...`).
    pub path: String,
    pub short_path: String,
    /// What an action depends on to read this artifact (the declared output for a projection).
    pub input: ArtifactRef,
    pub projected: bool,
    /// Shared with projections: set when an action declares this artifact as its output.
    bound: Arc<AtomicBool>,
}

impl ArtifactData {
    pub fn source(project_path: &str, short_path: &str) -> Arc<ArtifactData> {
        Arc::new(ArtifactData {
            kind: ArtifactKind::Source,
            path: project_path.to_owned(),
            short_path: short_path.to_owned(),
            input: ArtifactRef::Source(project_path.to_owned()),
            projected: false,
            bound: Arc::new(AtomicBool::new(true)),
        })
    }

    pub fn declared(
        path: String,
        short_path: String,
        owner: ConfiguredLabel,
        is_dir: bool,
    ) -> Arc<ArtifactData> {
        Arc::new(ArtifactData {
            kind: ArtifactKind::Build { owner, is_dir },
            input: ArtifactRef::Build(path.clone()),
            path,
            short_path,
            projected: false,
            bound: Arc::new(AtomicBool::new(false)),
        })
    }

    pub fn is_source(&self) -> bool {
        matches!(self.kind, ArtifactKind::Source)
    }

    pub fn is_bound(&self) -> bool {
        self.bound.load(Ordering::SeqCst)
    }

    /// Marks the artifact as produced by an action; false if it already was.
    pub fn bind(&self) -> bool {
        !self.bound.swap(true, Ordering::SeqCst)
    }

    /// The path as buck2 renders it on a command line: project-relative, and `./top.txt`
    /// for a file of the root package (so it never looks like a bare word).
    pub fn rendered_path(&self) -> String {
        if self.is_source() && !self.path.contains('/') {
            format!("./{}", self.path)
        } else {
            self.path.clone()
        }
    }

    pub fn basename(&self) -> &str {
        self.short_path.rsplit('/').next().unwrap_or("")
    }

    pub fn extension(&self) -> String {
        let base = self.basename();
        match base.rfind('.') {
            Some(i) if i > 0 => base[i..].to_owned(),
            _ => String::new(),
        }
    }

    pub fn project(self: &Arc<Self>, sub: &str) -> anyhow::Result<Arc<ArtifactData>> {
        if sub.is_empty()
            || sub.starts_with('/')
            || sub
                .split('/')
                .any(|s| s.is_empty() || s == "." || s == "..")
        {
            return Err(ArtifactError::BadProjection(sub.to_owned()).into());
        }
        Ok(Arc::new(ArtifactData {
            kind: self.kind.clone(),
            path: format!("{}/{}", self.path, sub),
            short_path: format!("{}/{}", self.short_path, sub),
            input: self.input.clone(),
            projected: true,
            bound: self.bound.clone(),
        }))
    }

    /// Checks that an action may declare this artifact as its output.
    pub fn check_bindable(&self) -> anyhow::Result<()> {
        if self.is_source() {
            return Err(ArtifactError::SourceAsOutput(self.path.clone()).into());
        }
        if self.projected {
            return Err(ArtifactError::ProjectedAsOutput(self.short_path.clone()).into());
        }
        if self.is_bound() {
            return Err(ArtifactError::AlreadyBound(self.short_path.clone()).into());
        }
        Ok(())
    }
}

impl std::fmt::Display for ArtifactData {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.kind {
            ArtifactKind::Source => write!(f, "<source {}>", self.path),
            ArtifactKind::Build { owner, .. } => {
                write!(f, "<build artifact {} bound to {}>", self.short_path, owner)
            }
        }
    }
}

/// An artifact value (`Artifact`).
#[derive(Debug, Display, ProvidesStaticType, NoSerialize, Allocative, Clone)]
#[display("{}", _0)]
pub struct StarlarkArtifact(#[allocative(skip)] pub Arc<ArtifactData>);

starlark_simple_value!(StarlarkArtifact);

#[starlark_value(type = "Artifact")]
impl<'v> StarlarkValue<'v> for StarlarkArtifact {
    fn get_methods() -> Option<&'static Methods> {
        Some(ARTIFACT_METHODS.methods())
    }

    fn equals(&self, other: Value<'v>) -> starlark::Result<bool> {
        Ok(StarlarkArtifact::from_value(other).is_some_and(|o| o.0.path == self.0.path))
    }

    fn write_hash(&self, hasher: &mut StarlarkHasher) -> starlark::Result<()> {
        self.0.path.hash(hasher);
        Ok(())
    }
}

#[starlark_module]
fn artifact_methods(builder: &mut MethodsBuilder) {
    #[starlark(attribute)]
    fn basename<'v>(this: &StarlarkArtifact, heap: Heap<'v>) -> starlark::Result<StringValue<'v>> {
        Ok(heap.alloc_str(this.0.basename()))
    }
    #[starlark(attribute)]
    fn extension<'v>(this: &StarlarkArtifact, heap: Heap<'v>) -> starlark::Result<StringValue<'v>> {
        Ok(heap.alloc_str(&this.0.extension()))
    }
    #[starlark(attribute)]
    fn short_path<'v>(
        this: &StarlarkArtifact,
        heap: Heap<'v>,
    ) -> starlark::Result<StringValue<'v>> {
        Ok(heap.alloc_str(&this.0.short_path))
    }
    #[starlark(attribute)]
    fn is_source(this: &StarlarkArtifact) -> starlark::Result<bool> {
        Ok(this.0.is_source())
    }
    #[starlark(attribute)]
    fn owner(this: &StarlarkArtifact) -> starlark::Result<NoneOr<StarlarkLabel>> {
        Ok(match &this.0.kind {
            ArtifactKind::Source => NoneOr::None,
            ArtifactKind::Build { owner, .. } => NoneOr::Other(StarlarkLabel(owner.clone())),
        })
    }
    fn as_output(this: &StarlarkArtifact) -> anyhow::Result<StarlarkOutputArtifact> {
        this.0.check_bindable()?;
        Ok(StarlarkOutputArtifact(this.0.clone()))
    }
    fn project(
        this: &StarlarkArtifact,
        #[starlark(require = pos)] path: &str,
        #[starlark(require = named, default = false)] hide_prefix: bool,
    ) -> anyhow::Result<StarlarkArtifact> {
        let _ = hide_prefix;
        Ok(StarlarkArtifact(this.0.project(path)?))
    }
    fn without_associated_artifacts(this: &StarlarkArtifact) -> starlark::Result<StarlarkArtifact> {
        Ok(this.clone())
    }
}

/// `artifact.as_output()`: marks the artifact as an output of the action it is passed to.
#[derive(Debug, Display, ProvidesStaticType, NoSerialize, Allocative, Clone)]
#[display("<output artifact for {}>", _0.short_path)]
pub struct StarlarkOutputArtifact(#[allocative(skip)] pub Arc<ArtifactData>);

starlark_simple_value!(StarlarkOutputArtifact);

#[starlark_value(type = "OutputArtifact")]
impl<'v> StarlarkValue<'v> for StarlarkOutputArtifact {}

starlark::methods_static!(ARTIFACT_METHODS = artifact_methods);
