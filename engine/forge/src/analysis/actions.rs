//! `ctx.actions`: declares outputs and registers actions; each registered action becomes a
//! [`forge_core::Action`] with inputs/outputs gathered from its command line.
// The starlark signatures mirror buck2's parameter lists.
#![allow(clippy::too_many_arguments)]

use std::sync::{Arc, Mutex};

use allocative::Allocative;
use derive_more::Display;
use starlark::any::ProvidesStaticType;
use starlark::environment::{Methods, MethodsBuilder};
use starlark::starlark_module;
use starlark::starlark_simple_value;
use starlark::values::dict::DictRef;
use starlark::values::list::AllocList;
use starlark::values::tuple::AllocTuple;
use starlark::values::{starlark_value, Heap, NoSerialize, StarlarkValue, Value};
use starlark_map::small_map::SmallMap;

use super::artifact::{ArtifactData, ArtifactKind, StarlarkArtifact, StarlarkOutputArtifact};
use super::cmd_args::{value_to_args, ArgDeps, ArgItem, CmdArgsData, StarlarkCmdArgs};
use super::label::ConfiguredLabel;
use super::providers::run_info_args;
use super::write_json::{render_json, to_json};
use crate::model::{Action, ActionId, ActionKind, ArtifactRef, OutputDecl};

#[derive(Debug, thiserror::Error)]
pub enum ActionError {
    #[error("Output path `{0}` is not a valid relative path (empty, absolute, or with `.`/`..` segments)")]
    BadOutputPath(String),
    #[error(
        "Multiple artifacts and/or metadata files are declared at the same output location `{0}`"
    )]
    ConflictingOutputPath(String),
    #[error("Output path `{0}` conflicts with the output path `{1}`: one is inside the other")]
    NestedOutputPaths(String, String),
    #[error("Artifact `{0}` was declared by `{1}`, not by this target; an action may only write outputs of the target being analysed")]
    ForeignOutput(String, String),
    #[error("Expected an output name, an artifact declared with `declare_output` or an `.as_output()`, got `{0}`")]
    BadOutput(String),
    #[error("Action category `{0}` is invalid: categories must be snake_case (lowercase letters, digits and single underscores, starting with a letter)")]
    BadCategory(String),
    #[error("Action category `{0}` contains duplicate identifier `{1}`")]
    DuplicateIdentifier(String, String),
    #[error("Multiple actions registered under category `{0}`; all actions within a category must have a unique identifier")]
    DuplicateSingleton(String),
    #[error("Action with category `{0}` does not declare any outputs: pass at least one artifact through `.as_output()` in its arguments or env")]
    NoOutputs(String),
    #[error("`{0}` content must be a string, a list or `cmd_args`; `allow_args = True` is needed for `{1}`")]
    ArgsNotAllowed(String, String),
    #[error("`ctx.actions.{0}` is not supported by forge yet")]
    Unsupported(String),
    #[error("`ctx.actions.run` got an unexpected named parameter `{0}`")]
    UnknownRunParam(String),
    #[error("`exe` must be a `RunInfo`, got `{0}`")]
    BadExe(String),
    #[error("`{0}` entries must map a path string to an artifact, got `{1}`")]
    BadDirEntry(String, String),
    #[error("Artifact `{0}` was declared but no action produces it (it must be bound by an action before analysis ends)")]
    Unbound(String),
    #[error("`weight` must be at least 1, got {0}")]
    BadWeight(i32),
}

/// Everything one analysis registers.
#[derive(Debug, Default)]
pub struct ActionsState {
    pub owner: Option<ConfiguredLabel>,
    /// `buck-out/forge/art/<cell>/<cfg>/<pkg>/__<name>__`.
    pub out_prefix: String,
    /// `buck-out/forge/tmp/<cell>/<hash16>`.
    pub scratch_prefix: String,
    /// Absolute project root, for `absolute = True` contents.
    pub project_root: String,
    pub declared: Vec<Arc<ArtifactData>>,
    pub actions: Vec<Action>,
    pub categories: Vec<(String, Option<String>)>,
}

impl ActionsState {
    fn owner(&self) -> &ConfiguredLabel {
        self.owner.as_ref().expect("actions have an owner")
    }

    pub fn declare(&mut self, short: &str, is_dir: bool) -> anyhow::Result<Arc<ArtifactData>> {
        if short.is_empty()
            || short.starts_with('/')
            || short
                .split('/')
                .any(|s| s.is_empty() || s == "." || s == "..")
        {
            return Err(ActionError::BadOutputPath(short.to_owned()).into());
        }
        for d in &self.declared {
            if d.short_path == short {
                return Err(ActionError::ConflictingOutputPath(short.to_owned()).into());
            }
            let (a, b) = (format!("{}/", d.short_path), format!("{short}/"));
            if a.starts_with(&b) || b.starts_with(&a) {
                return Err(
                    ActionError::NestedOutputPaths(short.to_owned(), d.short_path.clone()).into(),
                );
            }
        }
        let art = ArtifactData::declared(
            format!("{}/{}", self.out_prefix, short),
            short.to_owned(),
            self.owner().clone(),
            is_dir,
        );
        self.declared.push(art.clone());
        Ok(art)
    }

    /// Resolves the `output` parameter of write/copy actions (a name or a declared artifact).
    fn output_param(&mut self, v: Value) -> anyhow::Result<Arc<ArtifactData>> {
        if let Some(s) = v.unpack_str() {
            return self.declare(s, false);
        }
        if let Some(a) = StarlarkArtifact::from_value(v) {
            return Ok(a.0.clone());
        }
        if let Some(o) = StarlarkOutputArtifact::from_value(v) {
            return Ok(o.0.clone());
        }
        Err(ActionError::BadOutput(v.to_repr()).into())
    }

    fn bind(&self, a: &Arc<ArtifactData>) -> anyhow::Result<()> {
        a.check_bindable()?;
        if let ArtifactKind::Build { owner, .. } = &a.kind {
            if owner != self.owner() {
                return Err(
                    ActionError::ForeignOutput(a.short_path.clone(), owner.to_string()).into(),
                );
            }
        }
        a.bind();
        Ok(())
    }

    fn check_category(&mut self, category: &str, identifier: Option<&str>) -> anyhow::Result<()> {
        if !is_snake_case(category) {
            return Err(ActionError::BadCategory(category.to_owned()).into());
        }
        for (c, i) in &self.categories {
            if c != category {
                continue;
            }
            match (i.as_deref(), identifier) {
                (Some(a), Some(b)) if a == b => {
                    return Err(
                        ActionError::DuplicateIdentifier(category.to_owned(), b.to_owned()).into(),
                    )
                }
                (None, _) | (_, None) => {
                    return Err(ActionError::DuplicateSingleton(category.to_owned()).into())
                }
                _ => {}
            }
        }
        self.categories
            .push((category.to_owned(), identifier.map(str::to_owned)));
        Ok(())
    }

    fn push(
        &mut self,
        category: &str,
        identifier: Option<String>,
        kind: ActionKind,
        inputs: Vec<ArtifactRef>,
        outputs: &[Arc<ArtifactData>],
    ) {
        let outputs = outputs
            .iter()
            .map(|o| OutputDecl {
                path: o.path.clone(),
                is_dir: matches!(o.kind, ArtifactKind::Build { is_dir: true, .. }),
            })
            .collect();
        self.actions.push(Action {
            id: ActionId(0),
            owner: self.owner().label.target.clone(),
            category: category.to_owned(),
            identifier,
            kind,
            inputs,
            outputs,
        });
    }

    /// Fails if an output was declared but never bound to an action.
    pub fn check_all_bound(&self) -> anyhow::Result<()> {
        match self.declared.iter().find(|d| !d.is_bound()) {
            Some(d) => Err(ActionError::Unbound(d.short_path.clone()).into()),
            None => Ok(()),
        }
    }
}

fn is_snake_case(s: &str) -> bool {
    let mut prev_underscore = true;
    let mut first = true;
    for c in s.chars() {
        match c {
            'a'..='z' => {}
            '0'..='9' if !first => {}
            '_' if !prev_underscore => {}
            _ => return false,
        }
        prev_underscore = c == '_';
        first = false;
    }
    !s.is_empty() && !prev_underscore
}

/// `ctx.actions`. The state moves into the action graph when analysis of the target ends.
#[derive(Debug, Display, ProvidesStaticType, NoSerialize, Allocative)]
#[display("<ctx.actions>")]
pub struct AnalysisActions(#[allocative(skip)] pub Mutex<ActionsState>);

starlark_simple_value!(AnalysisActions);

impl AnalysisActions {
    fn state(&self) -> std::sync::MutexGuard<'_, ActionsState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub fn take(&self) -> ActionsState {
        std::mem::take(&mut *self.state())
    }
}

#[starlark_value(type = "AnalysisActions")]
impl<'v> StarlarkValue<'v> for AnalysisActions {
    fn get_methods() -> Option<&'static Methods> {
        Some(ACTIONS_METHODS.methods())
    }
}

/// The keyword parameters of buck2's `run` that forge accepts without acting on them.
const IGNORED_RUN_PARAMS: &[&str] = &[
    "low_pass_filter",
    "always_print_stderr",
    "weight_percentage",
    "dep_files",
    "metadata_env_var",
    "metadata_path",
    "incremental_metadata_ignore_tags",
    "no_outputs_cleanup",
    "incremental_remote_outputs",
    "allow_dep_file_cache_upload",
    "allow_offline_output_cache",
    "force_full_hybrid_if_capable",
    "unique_input_inodes",
    "error_handler",
    "remote_execution_dependencies",
    "re_gang_workers",
    "remote_execution_dynamic_image",
    "timeout_seconds",
    "meta_internal_extra_params",
    "outputs_for_error_handler",
    "expect_eligible_for_dedupe",
    "eager_materialization_enabled",
    "has_content_based_path",
];

fn content_to_args(what: &str, content: Value, allow_args: bool) -> anyhow::Result<CmdArgsData> {
    let data = value_to_args(content)?;
    if !allow_args && has_output(&data) {
        return Err(ActionError::ArgsNotAllowed(what.to_owned(), content.to_repr()).into());
    }
    Ok(data)
}

fn has_output(d: &CmdArgsData) -> bool {
    d.items.iter().chain(&d.hidden).any(|i| match i {
        ArgItem::Output(_) => true,
        ArgItem::Args(inner) => has_output(inner),
        _ => false,
    })
}

/// Directory entries (path inside the dir, artifact) and the inputs they need.
type DirEntries = (Vec<(String, ArtifactRef)>, Vec<ArtifactRef>);

fn dir_entries(what: &str, srcs: Value) -> anyhow::Result<DirEntries> {
    let d = DictRef::from_value(srcs)
        .ok_or_else(|| ActionError::BadDirEntry(what.to_owned(), srcs.to_repr()))?;
    let mut entries = Vec::new();
    let mut inputs = Vec::new();
    for (k, v) in d.iter() {
        let (Some(name), Some(a)) = (k.unpack_str(), StarlarkArtifact::from_value(v)) else {
            return Err(ActionError::BadDirEntry(
                what.to_owned(),
                format!("{}: {}", k.to_repr(), v.to_repr()),
            )
            .into());
        };
        let r = if a.0.projected {
            ArtifactRef::Build(a.0.path.clone())
        } else {
            a.0.input.clone()
        };
        entries.push((name.to_owned(), r));
        if !inputs.contains(&a.0.input) {
            inputs.push(a.0.input.clone());
        }
    }
    Ok((entries, inputs))
}

/// `symlinked_dir` / `copied_dir`: one in-process action building `output` from `srcs`.
fn dir_action(
    this: &AnalysisActions,
    category: &str,
    output: Value,
    srcs: Value,
    kind: impl FnOnce(Vec<(String, ArtifactRef)>) -> ActionKind,
) -> anyhow::Result<StarlarkArtifact> {
    let (entries, inputs) = dir_entries(category, srcs)?;
    let mut st = this.state();
    let out = st.output_param(output)?;
    st.bind(&out)?;
    st.push(
        category,
        Some(out.short_path.clone()),
        kind(entries),
        inputs,
        std::slice::from_ref(&out),
    );
    Ok(StarlarkArtifact(out))
}

#[starlark_module]
fn actions_methods(builder: &mut MethodsBuilder) {
    fn declare_output(
        this: &AnalysisActions,
        #[starlark(require = pos)] prefix: &str,
        #[starlark(require = pos)] filename: Option<&str>,
        #[starlark(require = named, default = false)] dir: bool,
        #[starlark(require = named)] has_content_based_path: Option<bool>,
    ) -> anyhow::Result<StarlarkArtifact> {
        let _ = has_content_based_path;
        let short = match filename {
            Some(f) => format!("{prefix}/{f}"),
            None => prefix.to_owned(),
        };
        Ok(StarlarkArtifact(this.state().declare(&short, dir)?))
    }

    fn write<'v>(
        this: &AnalysisActions,
        #[starlark(require = pos)] output: Value<'v>,
        #[starlark(require = pos)] content: Value<'v>,
        #[starlark(require = named, default = false)] is_executable: bool,
        #[starlark(require = named, default = false)] allow_args: bool,
        #[starlark(require = named, default = false)] with_inputs: bool,
        #[starlark(require = named, default = false)] absolute: bool,
        #[starlark(require = named)] has_content_based_path: Option<bool>,
        heap: Heap<'v>,
    ) -> anyhow::Result<Value<'v>> {
        let _ = has_content_based_path;
        let mut st = this.state();
        let out = st.output_param(output)?;
        let (bytes, inputs) = if let Some(s) = content.unpack_str() {
            (s.as_bytes().to_vec(), Vec::new())
        } else {
            let data = content_to_args("write", content, allow_args)?;
            let root = st.project_root.clone();
            let lines = data.render(absolute.then_some(root.as_str()));
            let mut deps = ArgDeps::default();
            data.visit_deps(&mut deps);
            (
                lines.join("\n").into_bytes(),
                if with_inputs { deps.inputs } else { Vec::new() },
            )
        };
        st.bind(&out)?;
        let id = out.short_path.clone();
        st.push(
            "write",
            Some(id),
            ActionKind::Write {
                content: bytes,
                is_executable,
            },
            inputs,
            std::slice::from_ref(&out),
        );
        let art = heap.alloc(StarlarkArtifact(out));
        Ok(if allow_args {
            heap.alloc(AllocTuple([art, heap.alloc(AllocList::EMPTY)]))
        } else {
            art
        })
    }

    fn write_json<'v>(
        this: &AnalysisActions,
        #[starlark(require = pos)] output: Value<'v>,
        #[starlark(require = pos)] content: Value<'v>,
        #[starlark(require = named, default = false)] with_inputs: bool,
        #[starlark(require = named, default = false)] pretty: bool,
        // Deliberately repeats write's last parameters and opening: each is a buck2 native.
        #[starlark(require = named, default = false)] absolute: bool,
        #[starlark(require = named)] has_content_based_path: Option<bool>,
        heap: Heap<'v>,
    ) -> anyhow::Result<Value<'v>> {
        let _ = has_content_based_path;
        let mut st = this.state();
        let out = st.output_param(output)?;
        let root = st.project_root.clone();
        let mut deps = ArgDeps::default();
        let json = to_json(content, absolute.then_some(root.as_str()), &mut deps)?;
        st.bind(&out)?;
        st.push(
            "write_json",
            Some(out.short_path.clone()),
            ActionKind::Write {
                content: render_json(&json, pretty),
                is_executable: false,
            },
            Vec::new(),
            std::slice::from_ref(&out),
        );
        if with_inputs {
            let hidden = deps.inputs_as_items();
            Ok(heap.alloc(StarlarkCmdArgs::new(CmdArgsData {
                items: vec![ArgItem::Artifact(out)],
                hidden,
                ..Default::default()
            })))
        } else {
            Ok(heap.alloc(StarlarkArtifact(out)))
        }
    }

    fn run<'v>(
        this: &AnalysisActions,
        #[starlark(require = pos)] arguments: Value<'v>,
        #[starlark(require = named)] category: &str,
        #[starlark(require = named)] identifier: Option<&str>,
        #[starlark(require = named)] env: Option<Value<'v>>,
        #[starlark(require = named, default = false)] local_only: bool,
        #[starlark(require = named, default = false)] prefer_local: bool,
        #[starlark(require = named, default = false)] prefer_remote: bool,
        #[starlark(require = named)] allow_cache_upload: Option<Value<'v>>,
        #[starlark(require = named)] weight: Option<i32>,
        #[starlark(require = named)] exe: Option<Value<'v>>,
        #[starlark(kwargs)] kwargs: SmallMap<String, Value<'v>>,
    ) -> anyhow::Result<starlark::values::none::NoneType> {
        let _ = prefer_remote;
        if let Some(k) = kwargs
            .keys()
            .find(|k| !IGNORED_RUN_PARAMS.contains(&k.as_str()))
        {
            return Err(ActionError::UnknownRunParam(k.clone()).into());
        }
        let weight = match weight {
            Some(w) if w < 1 => return Err(ActionError::BadWeight(w).into()),
            Some(w) => w as u32,
            None => 1,
        };
        let mut cmd = CmdArgsData::default();
        if let Some(exe) = exe.filter(|e| !e.is_none()) {
            let run = run_info_args(exe).ok_or_else(|| ActionError::BadExe(exe.to_repr()))?;
            cmd.items.push(ArgItem::Args(run));
        }
        cmd.items
            .push(ArgItem::Args(Arc::new(value_to_args(arguments)?)));
        let mut deps = ArgDeps::default();
        cmd.visit_deps(&mut deps);
        let mut env_pairs = Vec::new();
        if let Some(env) = env.filter(|e| !e.is_none()) {
            let d = DictRef::from_value(env).ok_or_else(|| {
                anyhow::anyhow!(
                    "`env` must be a dict of strings to arguments, got `{}`",
                    env.to_repr()
                )
            })?;
            for (k, v) in d.iter() {
                let key = k.unpack_str().ok_or_else(|| {
                    anyhow::anyhow!("`env` keys must be strings, got `{}`", k.to_repr())
                })?;
                let data = value_to_args(v)?;
                data.visit_deps(&mut deps);
                env_pairs.push((key.to_owned(), data.render(None).join(" ")));
            }
        }
        env_pairs.sort();
        let mut st = this.state();
        if deps.outputs.is_empty() {
            return Err(ActionError::NoOutputs(category.to_owned()).into());
        }
        st.check_category(category, identifier)?;
        for o in &deps.outputs {
            st.bind(o)?;
        }
        let scratch = match identifier {
            Some(i) => format!("{}/{}/{}", st.scratch_prefix, category, i),
            None => format!("{}/{}", st.scratch_prefix, category),
        };
        let allow_cache_upload = allow_cache_upload.and_then(|v| v.unpack_bool());
        st.push(
            category,
            identifier.map(str::to_owned),
            ActionKind::Run {
                argv: cmd.render(None),
                env: env_pairs,
                local_only,
                prefer_local,
                allow_cache_upload,
                weight,
                scratch,
            },
            deps.inputs,
            &deps.outputs,
        );
        Ok(starlark::values::none::NoneType)
    }

    fn copy_file<'v>(
        this: &AnalysisActions,
        #[starlark(require = pos)] dest: Value<'v>,
        #[starlark(require = pos)] src: &StarlarkArtifact,
        #[starlark(require = named)] has_content_based_path: Option<bool>,
        #[starlark(require = named)] executable_bit_override: Option<bool>,
    ) -> anyhow::Result<StarlarkArtifact> {
        let _ = (has_content_based_path, executable_bit_override);
        let mut st = this.state();
        let out = st.output_param(dest)?;
        st.bind(&out)?;
        let src_ref = if src.0.projected {
            ArtifactRef::Build(src.0.path.clone())
        } else {
            src.0.input.clone()
        };
        st.push(
            "copy",
            Some(out.short_path.clone()),
            ActionKind::Copy { src: src_ref },
            vec![src.0.input.clone()],
            std::slice::from_ref(&out),
        );
        Ok(StarlarkArtifact(out))
    }

    fn symlinked_dir<'v>(
        this: &AnalysisActions,
        #[starlark(require = pos)] output: Value<'v>,
        #[starlark(require = pos)] srcs: Value<'v>,
        #[starlark(require = named)] has_content_based_path: Option<bool>,
    ) -> anyhow::Result<StarlarkArtifact> {
        let _ = has_content_based_path;
        dir_action(this, "symlinked_dir", output, srcs, |entries| {
            ActionKind::SymlinkedDir { entries }
        })
    }

    fn copied_dir<'v>(
        this: &AnalysisActions,
        #[starlark(require = pos)] output: Value<'v>,
        #[starlark(require = pos)] srcs: Value<'v>,
        #[starlark(require = named)] has_content_based_path: Option<bool>,
        #[starlark(require = named)] executable_bit_override: Option<bool>,
    ) -> anyhow::Result<StarlarkArtifact> {
        let _ = (has_content_based_path, executable_bit_override);
        dir_action(this, "copied_dir", output, srcs, |entries| {
            ActionKind::CopiedDir { entries }
        })
    }

    // Deliberately one stub per native below: starlark_module wants a fn per method, and
    // what they share (the error) is `unsupported`'s.
    fn dynamic_output<'v>(
        this: &AnalysisActions,
        #[starlark(kwargs)] kwargs: SmallMap<String, Value<'v>>,
    ) -> anyhow::Result<starlark::values::none::NoneType> {
        let _ = (this, kwargs);
        unsupported("dynamic_output")
    }

    fn anon_target<'v>(
        this: &AnalysisActions,
        #[starlark(args)] args: starlark::values::tuple::UnpackTuple<Value<'v>>,
    ) -> anyhow::Result<starlark::values::none::NoneType> {
        let _ = (this, args);
        unsupported("anon_target")
    }

    fn anon_targets<'v>(
        this: &AnalysisActions,
        #[starlark(args)] args: starlark::values::tuple::UnpackTuple<Value<'v>>,
    ) -> anyhow::Result<starlark::values::none::NoneType> {
        let _ = (this, args);
        unsupported("anon_targets")
    }

    fn tset<'v>(
        this: &AnalysisActions,
        #[starlark(args)] args: starlark::values::tuple::UnpackTuple<Value<'v>>,
        #[starlark(kwargs)] kwargs: SmallMap<String, Value<'v>>,
    ) -> anyhow::Result<starlark::values::none::NoneType> {
        let _ = (this, args, kwargs);
        Err(ActionError::Unsupported("tset".to_owned()).into())
    }
}

impl ArgDeps {
    /// The inputs as `hidden` command line items (for `with_inputs = True` results).
    fn inputs_as_items(&self) -> Vec<ArgItem> {
        self.artifacts
            .iter()
            .cloned()
            .map(ArgItem::Artifact)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::is_snake_case;

    #[test]
    fn categories() {
        assert!(is_snake_case("compile"));
        assert!(is_snake_case("cxx_link2"));
        assert!(!is_snake_case("Compile"));
        assert!(!is_snake_case("a__b"));
        assert!(!is_snake_case("_a"));
        assert!(!is_snake_case("a_"));
        assert!(!is_snake_case("1a"));
        assert!(!is_snake_case(""));
    }
}

starlark::methods_static!(ACTIONS_METHODS = actions_methods);

/// The error of a buck2 action native this engine does not implement.
fn unsupported(name: &str) -> anyhow::Result<starlark::values::none::NoneType> {
    Err(ActionError::Unsupported(name.to_owned()).into())
}
