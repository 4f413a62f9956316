//! Target platforms and `select()`: a platform's `PlatformInfo` gives the constraints of a
//! configuration; a select key (config setting or constraint value) matches when its
//! `ConfigurationInfo` constraints are in the platform and its `values` equal the buckconfig.

use std::collections::BTreeMap;

use anyhow::Result;
use sha2::{Digest, Sha256};
use starlark::values::dict::DictRef;
use starlark::values::{Value, ValueLike};

use super::label::{StarlarkLabel, StarlarkTargetLabel, UNSPECIFIED_CFG, UNSPECIFIED_CFG_HASH};
use super::providers::{
    ProviderCollection, ProviderInstance, CONFIGURATION_INFO_UID, PLATFORM_INFO_UID,
};
use crate::model::{CoercedAttr, TargetLabel};

#[derive(Debug, thiserror::Error)]
pub enum ConfigurationError {
    #[error("Attempted to access the configuration data for the <unspecified> platform. This platform is used when the global default platform is unspecified and in that case configuration features (like `select()`) are unsupported.")]
    Unspecified,
    #[error("Target platform `{0}` does not provide `PlatformInfo`")]
    NotAPlatform(String),
    #[error("`{0}` used as a `select()` key does not provide `ConfigurationInfo`: select keys must be config settings or constraint values")]
    NotAConfigSetting(String),
    #[error(
        "None of {count} conditions matched configuration `{cfg}` and no default was set:\n{keys}"
    )]
    NoMatch {
        count: usize,
        cfg: String,
        keys: String,
    },
}

/// The constraints and values one select key (or a platform) stands for.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConfigurationData {
    /// Constraint setting label → constraint value label.
    pub constraints: BTreeMap<String, String>,
    /// `section.key` → value.
    pub values: BTreeMap<String, String>,
}

/// The configuration a target is analysed in.
#[derive(Clone, Debug)]
pub struct Configuration {
    /// `None` = the unspecified configuration.
    pub platform: Option<TargetLabel>,
    pub data: ConfigurationData,
    /// 16 hex chars used in output paths and after `#` in labels.
    pub hash: String,
}

impl Configuration {
    pub fn unspecified() -> Configuration {
        Configuration {
            platform: None,
            data: ConfigurationData::default(),
            hash: UNSPECIFIED_CFG_HASH.to_owned(),
        }
    }

    pub fn for_platform(platform: &TargetLabel, data: ConfigurationData) -> Configuration {
        let mut h = Sha256::new();
        h.update(platform.to_string());
        for (k, v) in &data.constraints {
            h.update(format!("\0{k}={v}"));
        }
        for (k, v) in &data.values {
            h.update(format!("\0{k}:{v}"));
        }
        Configuration {
            platform: Some(platform.clone()),
            data,
            hash: hex::encode(&h.finalize()[..8]),
        }
    }

    /// What buck2 prints after the label: `<unspecified>` or `root//config:p#<hash>`.
    pub fn display(&self) -> String {
        match &self.platform {
            None => UNSPECIFIED_CFG.to_owned(),
            Some(p) => format!("{p}#{}", self.hash),
        }
    }
}

/// A label-ish value (`TargetLabel`, `Label`, string) as `cell//pkg:name`.
fn label_string(v: Value) -> Option<String> {
    if let Some(l) = v.downcast_ref::<StarlarkTargetLabel>() {
        return Some(l.0.to_string());
    }
    if let Some(l) = v.downcast_ref::<StarlarkLabel>() {
        return Some(l.0.label.target.to_string());
    }
    v.unpack_str().map(str::to_owned)
}

fn configuration_info_data(info: Value) -> ConfigurationData {
    let mut data = ConfigurationData::default();
    let Some(info) = ProviderInstance::from_value(info) else {
        return data;
    };
    if let Some(d) = info.get("constraints").and_then(DictRef::from_value) {
        for (setting, value) in d.iter() {
            let value_label = ProviderInstance::from_value(value)
                .and_then(|v| v.get("label"))
                .and_then(label_string)
                .or_else(|| label_string(value));
            if let (Some(s), Some(v)) = (label_string(setting), value_label) {
                data.constraints.insert(s, v);
            }
        }
    }
    if let Some(d) = info.get("values").and_then(DictRef::from_value) {
        for (k, v) in d.iter() {
            if let (Some(k), Some(v)) = (k.unpack_str(), v.unpack_str()) {
                data.values.insert(k.to_owned(), v.to_owned());
            }
        }
    }
    data
}

/// The configuration a platform target's `PlatformInfo` describes.
pub fn platform_data(
    platform: &TargetLabel,
    coll: &ProviderCollection,
) -> Result<ConfigurationData> {
    let info = coll
        .find(PLATFORM_INFO_UID)
        .ok_or_else(|| ConfigurationError::NotAPlatform(platform.to_string()))?;
    let cfg = ProviderInstance::from_value(info)
        .and_then(|p| p.get("configuration"))
        .unwrap_or_else(Value::new_none);
    Ok(configuration_info_data(cfg))
}

/// The `ConfigurationInfo` of a select key target.
pub fn setting_data(key: &str, coll: &ProviderCollection) -> Result<ConfigurationData> {
    let info = coll
        .find(CONFIGURATION_INFO_UID)
        .ok_or_else(|| ConfigurationError::NotAConfigSetting(key.to_owned()))?;
    Ok(configuration_info_data(info))
}

/// Picks the select branch for `cfg`: the most specific matching key, else `DEFAULT`.
///
/// Under the unspecified configuration buck2 still resolves a select whose keys need no
/// constraint (`DEFAULT`, settings on buckconfig values only); the analyzer rejects a key with
/// constraints there before any select is resolved, as buck2 does.
pub fn resolve_select<'a>(
    branches: &'a [(String, CoercedAttr)],
    cfg: &Configuration,
    settings: &BTreeMap<String, ConfigurationData>,
    read_config: &dyn Fn(&str, &str) -> Option<String>,
) -> Result<&'a CoercedAttr> {
    let mut best: Option<(usize, &CoercedAttr)> = None;
    let mut default = None;
    for (key, value) in branches {
        if key == "DEFAULT" {
            default = Some(value);
            continue;
        }
        let Some(s) = settings.get(key) else {
            continue;
        };
        let constraints_ok = s
            .constraints
            .iter()
            .all(|(setting, v)| cfg.data.constraints.get(setting) == Some(v));
        let values_ok = s.values.iter().all(|(sk, v)| {
            let (section, k) = sk.split_once('.').unwrap_or((sk.as_str(), ""));
            cfg.data.values.get(sk) == Some(v) || read_config(section, k).as_deref() == Some(v)
        });
        if constraints_ok && values_ok {
            let specificity = s.constraints.len() + s.values.len();
            if best.is_none_or(|(b, _)| specificity > b) {
                best = Some((specificity, value));
            }
        }
    }
    if let Some((_, v)) = best {
        return Ok(v);
    }
    default.ok_or_else(|| {
        ConfigurationError::NoMatch {
            count: branches.len(),
            cfg: cfg.display(),
            keys: branches
                .iter()
                .map(|(k, _)| format!("  {k}"))
                .collect::<Vec<_>>()
                .join("\n"),
        }
        .into()
    })
}

/// Every select key used in an attribute value.
pub fn select_keys(v: &CoercedAttr, out: &mut Vec<String>) {
    match v {
        CoercedAttr::Select(branches) => {
            for (k, b) in branches {
                if k != "DEFAULT" && !out.contains(k) {
                    out.push(k.clone());
                }
                select_keys(b, out);
            }
        }
        CoercedAttr::List(xs) | CoercedAttr::Tuple(xs) | CoercedAttr::Concat(xs) => {
            xs.iter().for_each(|x| select_keys(x, out))
        }
        CoercedAttr::Dict(kvs) => kvs.iter().for_each(|(k, x)| {
            select_keys(k, out);
            select_keys(x, out)
        }),
        _ => {}
    }
}

/// Chooses the branch of one `select()`.
pub type SelectResolver<'a> = dyn Fn(&[(String, CoercedAttr)]) -> Result<CoercedAttr> + 'a;

/// Deps of a node in its configuration: select branches resolved first, each label once.
pub fn configured_deps(
    node: &crate::model::TargetNode,
    resolve: &SelectResolver,
) -> Result<Vec<(crate::model::ProvidersLabel, crate::model::DepKind)>> {
    let mut out: Vec<(crate::model::ProvidersLabel, crate::model::DepKind)> = Vec::new();
    for v in node.attrs.values() {
        let resolved = resolve_all(v, resolve)?;
        resolved.visit_deps(&mut |l, k| {
            if let Some(k) = k {
                if !out.iter().any(|(x, _)| x == l) {
                    out.push((l.clone(), k));
                }
            }
        });
    }
    Ok(out)
}

/// The value with every select replaced by its chosen branch.
pub fn resolve_all(v: &CoercedAttr, resolve: &SelectResolver) -> Result<CoercedAttr> {
    Ok(match v {
        CoercedAttr::Select(branches) => resolve_all(&resolve(branches)?, resolve)?,
        CoercedAttr::List(xs) => CoercedAttr::List(
            xs.iter()
                .map(|x| resolve_all(x, resolve))
                .collect::<Result<_>>()?,
        ),
        CoercedAttr::Tuple(xs) => CoercedAttr::Tuple(
            xs.iter()
                .map(|x| resolve_all(x, resolve))
                .collect::<Result<_>>()?,
        ),
        CoercedAttr::Concat(xs) => CoercedAttr::Concat(
            xs.iter()
                .map(|x| resolve_all(x, resolve))
                .collect::<Result<_>>()?,
        ),
        CoercedAttr::Dict(kvs) => CoercedAttr::Dict(
            kvs.iter()
                .map(|(k, x)| Ok((resolve_all(k, resolve)?, resolve_all(x, resolve)?)))
                .collect::<Result<_>>()?,
        ),
        other => other.clone(),
    })
}
