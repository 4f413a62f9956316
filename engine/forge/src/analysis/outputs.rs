//! What an analysed target offers the CLI: default/other outputs, the `RunInfo` command and
//! the `ExternalRunnerTestInfo` test.

use anyhow::Result;
use starlark::values::dict::DictRef;
use starlark::values::list::ListRef;
use starlark::values::Value;

use super::artifact::{ArtifactData, StarlarkArtifact};
use super::attrs::default_outputs_of;
use super::cmd_args::{value_to_args, ArgDeps, CmdArgsData};
use super::providers::{run_info_args, Builtin, ProviderCollection, ProviderInstance};
use crate::model::{ArtifactRef, CommandSpec, ProvidersLabel, TargetOutputs, TestSpec};

/// The artifact to build to obtain `a` (a projection is built through its declared output).
pub fn artifact_ref(a: &ArtifactData) -> ArtifactRef {
    if a.projected {
        match &a.input {
            ArtifactRef::Source(_) => ArtifactRef::Source(a.path.clone()),
            ArtifactRef::Build(_) => ArtifactRef::Build(a.path.clone()),
        }
    } else {
        a.input.clone()
    }
}

fn command_spec(data: &CmdArgsData, root: &str) -> CommandSpec {
    let mut deps = ArgDeps::default();
    data.visit_deps(&mut deps);
    CommandSpec {
        argv: data.render(None),
        argv_absolute: data.render(Some(root)),
        env: Vec::new(),
        inputs: deps.inputs,
    }
}

pub fn target_outputs(
    label: &ProvidersLabel,
    configuration: &str,
    coll: &ProviderCollection<'_>,
    root: &str,
) -> Result<TargetOutputs> {
    let mut out = TargetOutputs {
        default_outputs: default_outputs_of(coll)?
            .iter()
            .map(|a| artifact_ref(a))
            .collect(),
        ..Default::default()
    };
    if let Some(di) = coll
        .find_builtin(Builtin::DefaultInfo)
        .and_then(ProviderInstance::from_value)
    {
        if let Some(l) = di.get("other_outputs").and_then(ListRef::from_value) {
            for v in l.iter() {
                if let Some(a) = StarlarkArtifact::from_value(v) {
                    out.other_outputs.push(artifact_ref(&a.0));
                } else {
                    let mut deps = ArgDeps::default();
                    value_to_args(v)?.visit_deps(&mut deps);
                    out.other_outputs.extend(deps.inputs);
                }
            }
        }
    }
    if let Some(args) = coll.find_builtin(Builtin::RunInfo).and_then(run_info_args) {
        out.run = Some(command_spec(&args, root));
    }
    if let Some(t) = coll
        .find_builtin(Builtin::ExternalRunnerTestInfo)
        .and_then(ProviderInstance::from_value)
    {
        out.test = Some(test_spec(
            label,
            configuration,
            t.get("type"),
            t.get("command"),
            t.get("env"),
            t.get("labels"),
            root,
        )?);
    }
    Ok(out)
}

fn test_spec(
    label: &ProvidersLabel,
    configuration: &str,
    ty: Option<Value>,
    command: Option<Value>,
    env: Option<Value>,
    labels: Option<Value>,
    root: &str,
) -> Result<TestSpec> {
    let mut command_data = CmdArgsData::default();
    if let Some(c) = command.filter(|c| !c.is_none()) {
        command_data = value_to_args(c)?;
    }
    let mut spec = command_spec(&command_data, root);
    if let Some(d) = env.and_then(DictRef::from_value) {
        let mut deps = ArgDeps::default();
        for (k, v) in d.iter() {
            let data = value_to_args(v)?;
            data.visit_deps(&mut deps);
            spec.env.push((
                k.unpack_str().unwrap_or_default().to_owned(),
                data.render(None).join(" "),
            ));
        }
        for i in deps.inputs {
            if !spec.inputs.contains(&i) {
                spec.inputs.push(i);
            }
        }
    }
    Ok(TestSpec {
        label: label.clone(),
        configuration: configuration.to_owned(),
        test_type: ty
            .and_then(|t| t.unpack_str().map(str::to_owned))
            .unwrap_or_default(),
        command: spec,
        labels: labels
            .and_then(ListRef::from_value)
            .map(|l| {
                l.iter()
                    .filter_map(|s| s.unpack_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default(),
    })
}
