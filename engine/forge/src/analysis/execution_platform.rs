//! The execution platform's `CommandExecutorConfig`: which remote cache operations buck2
//! allows for the actions of a build.
//!
//! buck2 reads `[build] execution_platforms`, analyses that target and takes the
//! `executor_config` of the first platform in its `ExecutionPlatformRegistrationInfo` (this
//! project registers one platform). Without the setting buck2 runs every action locally with
//! no cache (its legacy local platform). Field meaning, from buck2's
//! `app/buck2_build_api/src/interpreter/rule_defs/command_executor_config.rs` and
//! `app/buck2_action_impl/src/actions/impls/run.rs` (facebook/buck2 0676d75903):
//! - `remote_cache_enabled` (default: `remote_enabled`) gates action cache lookups;
//! - `allow_cache_uploads` (default false) gates uploads of locally run actions, which also
//!   need the action's own `allow_cache_upload` (None → `[buck2] default_allow_cache_upload`);
//! - `max_cache_upload_mebibytes` caps the outputs' total size of an upload;
//! - `remote_enabled` runs actions on the engine of `[buck2_re_client]`, with
//!   `remote_execution_properties` as the platform properties of their Command/Action;
//!   `local_enabled` (default true) lets `prefer_local = True` actions stay local
//!   (`local_only = True` ones always do).

use anyhow::{anyhow, Context, Result};
use starlark::values::list::ListRef;
use starlark::values::Value;

use super::providers::{
    ProviderCollection, ProviderInstance, COMMAND_EXECUTOR_CONFIG_UID,
    EXECUTION_PLATFORM_REGISTRATION_INFO_UID,
};
use super::Analyzer;
use crate::model::ProvidersLabel;

/// What the execution platform allows; `Default` is buck2's local-only platform.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExecutorConfig {
    pub remote_cache_enabled: bool,
    pub allow_cache_uploads: bool,
    /// `max_cache_upload_mebibytes` in bytes (`None` = no cap).
    pub max_cache_upload_bytes: Option<u64>,
    pub remote_enabled: bool,
    pub local_enabled: bool,
    /// `remote_execution_properties`, sorted by name.
    pub remote_execution_properties: Vec<(String, String)>,
}

fn bool_field(instance: &ProviderInstance<'_>, field: &str) -> Option<bool> {
    instance
        .get(field)
        .filter(|v| !v.is_none())
        .and_then(Value::unpack_bool)
}

/// The `CommandExecutorConfig` of the first platform `platforms` registers.
pub fn executor_config(analyzer: &Analyzer, platforms: &ProvidersLabel) -> Result<ExecutorConfig> {
    let context =
        || format!("Reading the execution platform `{platforms}` ([build] execution_platforms)");
    let providers = analyzer.providers(platforms).with_context(context)?;
    let coll = ProviderCollection::from_value(providers.value())
        .expect("analysis results are provider collections");
    let registration = coll
        .find(EXECUTION_PLATFORM_REGISTRATION_INFO_UID)
        .and_then(ProviderInstance::from_value)
        .ok_or_else(|| {
            anyhow!("`{platforms}` does not provide `ExecutionPlatformRegistrationInfo`")
        })
        .with_context(context)?;
    let first = registration
        .get("platforms")
        .and_then(ListRef::from_value)
        .and_then(|l| l.iter().next())
        .and_then(ProviderInstance::from_value);
    let Some(platform) = first else {
        // No platform registered: buck2 would find no compatible execution platform.
        return Err(anyhow!("`{platforms}` registers no execution platform")).with_context(context);
    };
    let executor = platform
        .get("executor_config")
        .and_then(ProviderInstance::from_value)
        .filter(|e| e.meta.uid == COMMAND_EXECUTOR_CONFIG_UID)
        .ok_or_else(|| {
            anyhow!("the execution platform's `executor_config` is not a `CommandExecutorConfig`")
        })
        .with_context(context)?;
    let remote_enabled = bool_field(executor, "remote_enabled").unwrap_or(false);
    let max = executor
        .get("max_cache_upload_mebibytes")
        .filter(|v| !v.is_none())
        .and_then(|v| v.unpack_i32())
        .map(|mib| mib.max(0) as u64 * 1024 * 1024);
    Ok(ExecutorConfig {
        remote_cache_enabled: bool_field(executor, "remote_cache_enabled")
            .unwrap_or(remote_enabled),
        allow_cache_uploads: bool_field(executor, "allow_cache_uploads").unwrap_or(false),
        max_cache_upload_bytes: max,
        remote_enabled,
        local_enabled: bool_field(executor, "local_enabled").unwrap_or(true),
        remote_execution_properties: properties(executor)?,
    })
}

/// `remote_execution_properties`: a dict of string keys to string (or int/bool) values.
fn properties(executor: &ProviderInstance<'_>) -> Result<Vec<(String, String)>> {
    let Some(v) = executor
        .get("remote_execution_properties")
        .filter(|v| !v.is_none())
    else {
        return Ok(Vec::new());
    };
    let dict = starlark::values::dict::DictRef::from_value(v).ok_or_else(|| {
        anyhow!("`remote_execution_properties` of the execution platform is not a dict")
    })?;
    let mut out: Vec<(String, String)> = dict
        .iter()
        .map(|(k, v)| {
            let s = |x: Value| {
                x.unpack_str()
                    .map(str::to_owned)
                    .unwrap_or_else(|| x.to_str())
            };
            (s(k), s(v))
        })
        .collect();
    out.sort();
    Ok(out)
}
