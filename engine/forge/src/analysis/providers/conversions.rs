//! Conversions between provider instances and what analysis needs of them: `DefaultInfo`'s
//! parameters to its fields, `RunInfo` to command line data, field values of an instance.

use std::sync::Arc;

use starlark::values::dict::{AllocDict, DictRef};
use starlark::values::list::{AllocList, ListRef};
use starlark::values::{Heap, Value, ValueLike};

use crate::analysis::artifact::StarlarkArtifact;
use crate::analysis::cmd_args::{CmdArgsData, StarlarkCmdArgs};

use super::*;

/// `DefaultInfo(default_output, default_outputs, other_outputs, sub_targets)` →
/// fields `default_outputs`, `other_outputs`, `sub_targets` as buck2 exposes them.
pub(crate) fn default_info_fields<'v>(
    v: Vec<Value<'v>>,
    heap: Heap<'v>,
) -> anyhow::Result<Vec<Value<'v>>> {
    let [one, many, other, subs]: [Value<'v>; 4] =
        v.try_into().expect("DefaultInfo has four parameters");
    let bad = |field: &str, expected: &str, got: Value| ProviderError::BadType {
        provider: "DefaultInfo".to_owned(),
        field: field.to_owned(),
        expected: expected.to_owned(),
        got: got.to_repr(),
    };
    if !one.is_none() && !many.is_none() {
        return Err(ProviderError::BothDefaultOutputs.into());
    }
    let mut outputs = Vec::new();
    if !one.is_none() {
        if StarlarkArtifact::from_value(one).is_none() {
            return Err(bad("default_output", "an artifact", one).into());
        }
        outputs.push(one);
    } else if !many.is_none() {
        let l = ListRef::from_value(many).ok_or_else(|| bad("default_outputs", "a list", many))?;
        for x in l.iter() {
            if StarlarkArtifact::from_value(x).is_none() {
                return Err(bad("default_outputs", "a list of artifacts", x).into());
            }
            outputs.push(x);
        }
    }
    let other_list = if other.is_none() {
        Vec::new()
    } else {
        ListRef::from_value(other)
            .ok_or_else(|| bad("other_outputs", "a list", other))?
            .iter()
            .collect()
    };
    let mut sub_entries = Vec::new();
    if !subs.is_none() {
        let d = DictRef::from_value(subs).ok_or_else(|| bad("sub_targets", "a dict", subs))?;
        for (k, v) in d.iter() {
            let name = k
                .unpack_str()
                .ok_or_else(|| bad("sub_targets", "a dict keyed by strings", k))?
                .to_owned();
            let coll = if ProviderCollection::from_value(v).is_some() {
                v
            } else {
                let l = ListRef::from_value(v)
                    .ok_or_else(|| bad("sub_targets", "a dict of provider lists", v))?;
                heap.alloc(ProviderCollection::from_providers(l.iter().collect())?)
            };
            sub_entries.push((name, coll));
        }
    }
    Ok(vec![
        heap.alloc(AllocList(outputs)),
        heap.alloc(AllocList(other_list)),
        heap.alloc(AllocDict(sub_entries)),
    ])
}

/// Field values of a provider instance value, if it is one.
pub fn as_provider<'v>(v: Value<'v>) -> Option<(&'v Arc<ProviderMeta>, Vec<Value<'v>>)> {
    ProviderInstance::from_value(v)
        .map(|p| (&p.meta, p.values.iter().map(|x| x.to_value()).collect()))
}

/// `RunInfo.args` as command line data, when `v` is a `RunInfo`.
pub fn run_info_args(v: Value) -> Option<Arc<CmdArgsData>> {
    let p = ProviderInstance::from_value(v)?;
    if p.meta.builtin != Some(Builtin::RunInfo) {
        return None;
    }
    StarlarkCmdArgs::from_value(p.values[0].to_value()).map(|c| Arc::new(c.data()))
}
