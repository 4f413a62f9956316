//! Turns coerced attribute values into what `ctx.attrs` shows: deps become `Dependency`,
//! sources become artifacts, `attrs.arg` strings become command lines, selects resolve.

use std::collections::HashMap;
use std::sync::Arc;

use starlark::values::dict::AllocDict;
use starlark::values::list::{AllocList, ListRef};
use starlark::values::tuple::AllocTuple;
use starlark::values::{Heap, OwnedFrozenValue, Value};

use super::artifact::{ArtifactData, StarlarkArtifact};
use super::cmd_args::{ArgItem, CmdArgsData, StarlarkCmdArgs};
use super::context::Dependency;
use super::label::{ConfiguredLabel, StarlarkLabel, UNSPECIFIED_CFG};
use super::providers::{provider_identity, Builtin, ProviderCollection, ProviderInstance};
use crate::model::{AttrType, CoercedAttr, ProvidersLabel, TargetLabel};

#[derive(Debug, thiserror::Error)]
pub enum AttrError {
    #[error("Attribute requires a dep that provides `{provider}`, but it was not found on `{dep}`. Found these providers: {found}")]
    MissingProvider {
        provider: String,
        dep: String,
        found: String,
    },
    #[error("Attempted to access the configuration data for the <unspecified> platform. This platform is used when the global default platform is unspecified and in that case configuration features (like `select()`) are unsupported.")]
    UnspecifiedSelect,
    #[error("Expected a single artifact from `{0}` for a source attribute, but it has {1} default outputs")]
    NotSingleSource(String, usize),
    #[error("Dependency `{0}` was not analysed (internal error)")]
    Unresolved(String),
    #[error("Cannot concatenate attribute values of different kinds: `{0}`")]
    BadConcat(String),
    #[error("Invalid label `{label}` in `$({kind} ...)` of attribute string `{raw}`")]
    BadMacroLabel {
        kind: String,
        label: String,
        raw: String,
    },
    #[error("`$(exe {0})` needs a dep with `RunInfo`")]
    ExeWithoutRunInfo(String),
}

/// The analysed providers of one dependency (target or sub-target).
pub struct ResolvedDep {
    pub label: ConfiguredLabel,
    pub providers: OwnedFrozenValue,
}

pub struct AttrResolver<'a> {
    pub target: &'a TargetLabel,
    pub deps: &'a HashMap<ProvidersLabel, ResolvedDep>,
}

impl AttrResolver<'_> {
    fn dep(&self, l: &ProvidersLabel) -> anyhow::Result<&ResolvedDep> {
        self.deps
            .get(l)
            .ok_or_else(|| AttrError::Unresolved(l.to_string()).into())
    }

    fn collection(&self, l: &ProvidersLabel) -> anyhow::Result<&ProviderCollection<'_>> {
        Ok(
            ProviderCollection::from_value(self.dep(l)?.providers.value())
                .expect("analysis results are provider collections"),
        )
    }

    /// The default outputs of a dep, as artifact data.
    pub fn default_outputs(&self, l: &ProvidersLabel) -> anyhow::Result<Vec<Arc<ArtifactData>>> {
        default_outputs_of(self.collection(l)?)
    }

    pub fn to_value<'v>(
        &self,
        v: &CoercedAttr,
        ty: Option<&AttrType>,
        heap: Heap<'v>,
    ) -> anyhow::Result<Value<'v>> {
        let inner_ty = |i: usize| -> Option<&AttrType> {
            match ty {
                Some(AttrType::List(t)) => Some(t),
                Some(AttrType::Option(t)) => Some(t),
                Some(AttrType::Tuple(ts)) => ts.get(i),
                _ => None,
            }
        };
        Ok(match v {
            CoercedAttr::None => Value::new_none(),
            CoercedAttr::Bool(b) => Value::new_bool(*b),
            CoercedAttr::Int(i) => heap.alloc(*i),
            CoercedAttr::String(s) => heap.alloc(s.as_str()),
            CoercedAttr::List(xs) => {
                let mut out = Vec::with_capacity(xs.len());
                for (i, x) in xs.iter().enumerate() {
                    out.push(self.to_value(x, inner_ty(i), heap)?);
                }
                heap.alloc(AllocList(out))
            }
            CoercedAttr::Tuple(xs) => {
                let mut out = Vec::with_capacity(xs.len());
                for (i, x) in xs.iter().enumerate() {
                    out.push(self.to_value(x, inner_ty(i), heap)?);
                }
                heap.alloc(AllocTuple(out))
            }
            CoercedAttr::Dict(kvs) => {
                let (kt, vt) = match ty {
                    Some(AttrType::Dict { key, value, .. }) => (Some(&**key), Some(&**value)),
                    _ => (None, None),
                };
                let mut out = Vec::with_capacity(kvs.len());
                for (k, v) in kvs {
                    out.push((self.to_value(k, kt, heap)?, self.to_value(v, vt, heap)?));
                }
                heap.alloc(AllocDict(out))
            }
            CoercedAttr::Dep { label, .. } => {
                let dep = self.dep(label)?;
                let coll = self.collection(label)?;
                let required: &[OwnedFrozenValue] = match ty {
                    Some(AttrType::Dep { providers, .. }) => providers,
                    _ => &[],
                };
                for p in required {
                    if let Some((uid, name)) = provider_identity(p.value()) {
                        if coll.find(uid).is_none() {
                            return Err(AttrError::MissingProvider {
                                provider: name,
                                dep: dep.label.to_string(),
                                found: coll.names().join(", "),
                            }
                            .into());
                        }
                    }
                }
                let providers = heap.access_owned_frozen_value(&dep.providers);
                heap.alloc(Dependency {
                    label: dep.label.clone(),
                    providers: providers
                        .unpack_frozen()
                        .expect("owned frozen values are frozen"),
                })
            }
            CoercedAttr::SourceFile {
                project_path,
                package_relative,
            } => heap.alloc(StarlarkArtifact(ArtifactData::source(
                project_path,
                package_relative,
            ))),
            CoercedAttr::SourceDep(label) => {
                let outs = self.default_outputs(label)?;
                if outs.len() != 1 {
                    return Err(AttrError::NotSingleSource(label.to_string(), outs.len()).into());
                }
                // Keep the dep's heap alive: the artifact data is shared, not copied.
                let _ = heap.access_owned_frozen_value(&self.dep(label)?.providers);
                heap.alloc(StarlarkArtifact(outs[0].clone()))
            }
            CoercedAttr::Label(l) => heap.alloc(StarlarkLabel(ConfiguredLabel {
                label: l.clone(),
                cfg: UNSPECIFIED_CFG.to_owned(),
            })),
            CoercedAttr::Arg { raw, macro_deps } => {
                heap.alloc(StarlarkCmdArgs::new(self.expand_arg(raw, macro_deps)?))
            }
            // The analyzer resolves selects before conversion (see `configuration`).
            CoercedAttr::Select(_) => return Err(AttrError::UnspecifiedSelect.into()),
            CoercedAttr::Concat(parts) => {
                let mut values = Vec::new();
                for p in parts {
                    values.push(self.to_value(p, ty, heap)?);
                }
                concat(values, heap)?
            }
        })
    }

    /// `attrs.arg()`: one argument, with `$(location x)` / `$(exe x)` replaced by paths.
    fn expand_arg(&self, raw: &str, macro_deps: &[ProvidersLabel]) -> anyhow::Result<CmdArgsData> {
        let mut parts = CmdArgsData {
            opts: super::cmd_args::ArgOptions {
                delimiter: Some(String::new()),
                ..Default::default()
            },
            ..Default::default()
        };
        let mut rest = raw;
        let mut literal = String::new();
        while let Some(start) = rest.find("$(") {
            let Some(end) = rest[start..].find(')') else {
                break;
            };
            let inner = &rest[start + 2..start + end];
            let mut words = inner.split_whitespace();
            let kind = words.next().unwrap_or("");
            let arg = words.next().unwrap_or("");
            if !matches!(kind, "location" | "exe" | "location_exec") || arg.is_empty() {
                literal.push_str(&rest[..start + end + 1]);
                rest = &rest[start + end + 1..];
                continue;
            }
            literal.push_str(&rest[..start]);
            if !literal.is_empty() {
                parts.items.push(ArgItem::Str(std::mem::take(&mut literal)));
            }
            let bad = || AttrError::BadMacroLabel {
                kind: kind.to_owned(),
                label: arg.to_owned(),
                raw: raw.to_owned(),
            };
            let label = parse_relative_label(arg, self.target).ok_or_else(bad)?;
            let label = macro_deps
                .iter()
                .find(|l| **l == label)
                .cloned()
                .unwrap_or(label);
            if kind == "exe" {
                let coll = self.collection(&label)?;
                let run = coll
                    .find_builtin(Builtin::RunInfo)
                    .and_then(super::providers::run_info_args)
                    .ok_or_else(|| AttrError::ExeWithoutRunInfo(label.to_string()))?;
                let mut spaced = (*run).clone();
                let wrapped = CmdArgsData {
                    items: vec![ArgItem::Args(Arc::new(std::mem::take(&mut spaced)))],
                    opts: super::cmd_args::ArgOptions {
                        delimiter: Some(" ".to_owned()),
                        ..Default::default()
                    },
                    ..Default::default()
                };
                parts.items.push(ArgItem::Args(Arc::new(wrapped)));
            } else {
                let outs = self.default_outputs(&label)?;
                let joined = CmdArgsData {
                    items: outs.into_iter().map(ArgItem::Artifact).collect(),
                    opts: super::cmd_args::ArgOptions {
                        delimiter: Some(" ".to_owned()),
                        ..Default::default()
                    },
                    ..Default::default()
                };
                parts.items.push(ArgItem::Args(Arc::new(joined)));
            }
            rest = &rest[start + end + 1..];
        }
        literal.push_str(rest);
        if !literal.is_empty() {
            parts.items.push(ArgItem::Str(literal));
        }
        if parts.items.is_empty() {
            parts.items.push(ArgItem::Str(String::new()));
        }
        Ok(parts)
    }
}

/// The default outputs of an analysed collection.
pub fn default_outputs_of(coll: &ProviderCollection<'_>) -> anyhow::Result<Vec<Arc<ArtifactData>>> {
    let Some(di) = coll.find_builtin(Builtin::DefaultInfo) else {
        return Ok(Vec::new());
    };
    let di = ProviderInstance::from_value(di).expect("DefaultInfo is a provider");
    let outs = di.get("default_outputs").unwrap_or_else(Value::new_none);
    Ok(ListRef::from_value(outs)
        .map(|l| {
            l.iter()
                .filter_map(|a| StarlarkArtifact::from_value(a).map(|a| a.0.clone()))
                .collect()
        })
        .unwrap_or_default())
}

fn concat<'v>(values: Vec<Value<'v>>, heap: Heap<'v>) -> anyhow::Result<Value<'v>> {
    let mut acc: Option<Value<'v>> = None;
    for v in values {
        acc = Some(match acc {
            None => v,
            Some(a) => a
                .add(v, heap)
                .map_err(|_| AttrError::BadConcat(format!("{} + {}", a.to_repr(), v.to_repr())))?,
        });
    }
    Ok(acc.unwrap_or_else(Value::new_none))
}

/// `:name`, `//pkg:name`, `cell//pkg:name`, optionally with `[sub]`s, relative to `base`.
pub fn parse_relative_label(s: &str, base: &TargetLabel) -> Option<ProvidersLabel> {
    let (main, subs) = match s.find('[') {
        Some(i) => (&s[..i], &s[i..]),
        None => (s, ""),
    };
    let mut sub_target = Vec::new();
    let mut r = subs;
    while let Some(stripped) = r.strip_prefix('[') {
        let end = stripped.find(']')?;
        sub_target.push(stripped[..end].to_owned());
        r = &stripped[end + 1..];
    }
    if !r.is_empty() {
        return None;
    }
    let target = if let Some(name) = main.strip_prefix(':') {
        TargetLabel {
            cell: base.cell.clone(),
            package: base.package.clone(),
            name: name.to_owned(),
        }
    } else {
        let i = main.find("//")?;
        let cell = if i == 0 {
            base.cell.clone()
        } else {
            main[..i].trim_start_matches('@').to_owned()
        };
        let rest = &main[i + 2..];
        let (package, name) = match rest.rfind(':') {
            Some(j) => (rest[..j].to_owned(), rest[j + 1..].to_owned()),
            None => (
                rest.to_owned(),
                rest.rsplit('/').next().unwrap_or("").to_owned(),
            ),
        };
        TargetLabel {
            cell,
            package,
            name,
        }
    };
    if target.name.is_empty() {
        return None;
    }
    Some(ProvidersLabel { target, sub_target })
}
