//! `cmd_args` and the type names rule files use in annotations.
// The starlark signature mirrors buck2's `cmd_args` parameter list.
#![allow(clippy::too_many_arguments)]

use starlark::environment::GlobalsBuilder;
use starlark::starlark_module;
use starlark::values::starlark_value_as_type::StarlarkValueAsType;
use starlark::values::tuple::UnpackTuple;
use starlark::values::Value;

use super::cmd_args::{new_cmd_args, CmdArgsKwargs, StarlarkCmdArgs};
use super::{actions, artifact, context, label, providers};

#[starlark_module]
pub(super) fn analysis_functions(builder: &mut GlobalsBuilder) {
    /// Builds a command line: `cmd_args("cc", src, format = "-I{}", hidden = [...])`.
    #[starlark(as_type = StarlarkCmdArgs)]
    fn cmd_args<'v>(
        #[starlark(args)] args: UnpackTuple<Value<'v>>,
        #[starlark(require = named)] hidden: Option<Value<'v>>,
        #[starlark(require = named)] delimiter: Option<String>,
        #[starlark(require = named)] format: Option<String>,
        #[starlark(require = named)] prepend: Option<String>,
        #[starlark(require = named)] quote: Option<String>,
        #[starlark(require = named, default = false)] ignore_artifacts: bool,
        #[starlark(require = named)] absolute_prefix: Option<String>,
        #[starlark(require = named)] absolute_suffix: Option<String>,
        #[starlark(require = named, default = 0)] parent: i32,
        #[starlark(require = named)] relative_to: Option<Value<'v>>,
        #[starlark(require = named)] replace_regex: Option<Value<'v>>,
    ) -> anyhow::Result<StarlarkCmdArgs> {
        let none_to_opt = |v: Option<Value<'v>>| v.filter(|v| !v.is_none());
        let data = new_cmd_args(
            &args.items,
            CmdArgsKwargs {
                hidden: none_to_opt(hidden),
                delimiter,
                format,
                prepend,
                quote,
                ignore_artifacts,
                absolute_prefix,
                absolute_suffix,
                parent,
                relative_to: none_to_opt(relative_to),
                replace_regex: none_to_opt(replace_regex),
            },
        )?;
        Ok(StarlarkCmdArgs::new(data))
    }

    const AnalysisContext: StarlarkValueAsType<context::AnalysisContext<'static>> =
        StarlarkValueAsType::new();
    const AnalysisActions: StarlarkValueAsType<actions::AnalysisActions> =
        StarlarkValueAsType::new();
    const Artifact: StarlarkValueAsType<artifact::StarlarkArtifact> = StarlarkValueAsType::new();
    const OutputArtifact: StarlarkValueAsType<artifact::StarlarkOutputArtifact> =
        StarlarkValueAsType::new();
    const Provider: StarlarkValueAsType<providers::FrozenProviderInstance> =
        StarlarkValueAsType::new();
    const ProviderCollection: StarlarkValueAsType<providers::FrozenProviderCollection> =
        StarlarkValueAsType::new();
    const Dependency: StarlarkValueAsType<context::Dependency> = StarlarkValueAsType::new();
    const Label: StarlarkValueAsType<label::StarlarkLabel> = StarlarkValueAsType::new();
    const TargetLabel: StarlarkValueAsType<label::StarlarkTargetLabel> = StarlarkValueAsType::new();
    const CellPath: StarlarkValueAsType<label::CellPath> = StarlarkValueAsType::new();
}
