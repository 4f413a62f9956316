//! The builtin providers: their identities (`*_UID`), fields, and registration as globals.

use starlark::environment::GlobalsBuilder;

use super::*;

pub(crate) fn builtin(
    name: &str,
    uid: u64,
    fields: &[&str],
    required: &[&str],
    positional: usize,
    kind: Builtin,
) -> FrozenProviderCallable {
    let fields: Vec<String> = fields.iter().map(|s| (*s).to_owned()).collect();
    let req = fields
        .iter()
        .map(|f| required.contains(&f.as_str()))
        .collect();
    let n = fields.len();
    let meta = ProviderMeta::new(uid, name, fields, req, positional, Some(kind))
        .expect("builtin provider types are valid");
    let instance_meta = if kind == Builtin::DefaultInfo {
        // `default_output` is folded into `default_outputs`, as buck2 exposes it.
        let fields: Vec<String> = ["default_outputs", "other_outputs", "sub_targets"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        ProviderMeta::new(uid, name, fields, vec![false; 3], 0, Some(kind))
            .expect("builtin provider types are valid")
    } else {
        meta.clone()
    };
    FrozenProviderCallable {
        meta,
        instance_meta,
        defaults: vec![None; n],
        types: vec![None; n],
        doc: String::new(),
    }
}

pub const DEFAULT_INFO_UID: u64 = 1;
pub const RUN_INFO_UID: u64 = 2;
pub const TEST_INFO_UID: u64 = 3;
pub const CONFIGURATION_INFO_UID: u64 = 4;
pub const PLATFORM_INFO_UID: u64 = 5;
pub const CONSTRAINT_SETTING_INFO_UID: u64 = 6;
pub const CONSTRAINT_VALUE_INFO_UID: u64 = 7;
pub const TEMPLATE_PLACEHOLDER_INFO_UID: u64 = 8;
pub const EXECUTION_PLATFORM_INFO_UID: u64 = 9;
pub const EXECUTION_PLATFORM_REGISTRATION_INFO_UID: u64 = 10;
pub const COMMAND_EXECUTOR_CONFIG_UID: u64 = 11;

pub fn register_provider_globals(builder: &mut GlobalsBuilder) {
    builder.set(
        "DefaultInfo",
        builtin(
            "DefaultInfo",
            DEFAULT_INFO_UID,
            &[
                "default_output",
                "default_outputs",
                "other_outputs",
                "sub_targets",
            ],
            &[],
            1,
            Builtin::DefaultInfo,
        ),
    );
    builder.set(
        "RunInfo",
        builtin("RunInfo", RUN_INFO_UID, &["args"], &[], 1, Builtin::RunInfo),
    );
    builder.set(
        "ExternalRunnerTestInfo",
        builtin(
            "ExternalRunnerTestInfo",
            TEST_INFO_UID,
            &[
                "type",
                "command",
                "env",
                "labels",
                "contacts",
                "use_project_relative_paths",
                "run_from_project_root",
                "default_executor",
                "executor_overrides",
                "local_resources",
                "required_local_resources",
                "worker",
                "supports_test_execution_caching",
            ],
            &["type"],
            0,
            Builtin::ExternalRunnerTestInfo,
        ),
    );
    let plain: &[(&str, u64, &[&str], &[&str])] = &[
        (
            "ConfigurationInfo",
            CONFIGURATION_INFO_UID,
            &["constraints", "values"],
            &["constraints", "values"],
        ),
        (
            "PlatformInfo",
            PLATFORM_INFO_UID,
            &["label", "configuration"],
            &["label", "configuration"],
        ),
        (
            "ConstraintSettingInfo",
            CONSTRAINT_SETTING_INFO_UID,
            &["label", "default"],
            &["label"],
        ),
        (
            "ConstraintValueInfo",
            CONSTRAINT_VALUE_INFO_UID,
            &["setting", "label"],
            &["setting", "label"],
        ),
        (
            "TemplatePlaceholderInfo",
            TEMPLATE_PLACEHOLDER_INFO_UID,
            &["unkeyed_variables", "keyed_variables"],
            &[],
        ),
        (
            "ExecutionPlatformInfo",
            EXECUTION_PLATFORM_INFO_UID,
            &["label", "configuration", "executor_config"],
            &["label", "configuration", "executor_config"],
        ),
        (
            "ExecutionPlatformRegistrationInfo",
            EXECUTION_PLATFORM_REGISTRATION_INFO_UID,
            &["platforms", "fallback", "exec_marker_constraint"],
            &["platforms"],
        ),
        (
            "CommandExecutorConfig",
            COMMAND_EXECUTOR_CONFIG_UID,
            &[
                "local_enabled",
                "remote_enabled",
                "remote_cache_enabled",
                "remote_dep_file_cache_enabled",
                "remote_execution_properties",
                "remote_execution_action_key",
                "remote_execution_max_input_files_mebibytes",
                "remote_execution_queue_time_threshold_s",
                "remote_execution_use_case",
                "use_limited_hybrid",
                "allow_limited_hybrid_fallbacks",
                "allow_hybrid_fallbacks_on_failure",
                "use_windows_path_separators",
                "use_persistent_workers",
                "use_bazel_protocol_remote_persistent_workers",
                "allow_cache_uploads",
                "max_cache_upload_mebibytes",
                "experimental_low_pass_filter",
                "remote_output_paths",
                "network_access",
                "remote_execution_resource_units",
                "remote_execution_dependencies",
                "remote_execution_gang_workers",
                "remote_execution_dynamic_image",
                "meta_internal_extra_params",
                "priority",
            ],
            &["local_enabled", "remote_enabled"],
        ),
    ];
    for (name, uid, fields, required) in plain {
        builder.set(
            name,
            builtin(name, *uid, fields, required, 0, Builtin::Plain),
        );
    }
    register_provider_functions(builder);
}
