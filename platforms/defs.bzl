"""The execution platform: every action runs on the local machine. With `remote_cache = True`
the same platform also reads from and uploads to the remote cache configured in
`[buck2_re_client]` (local execution + remote cache, buck2 >= 2025-04). With
`remote_execution = True` run actions execute on the engine of `[buck2_re_client]` (buck2's
hybrid executor: `local_only = True` actions, and `prefer_local = True` ones, stay local),
asking for workers with `remote_execution_properties`.
"""

RemoteExecutionPropertiesInfo = provider(
    doc = "The platform properties remote actions ask for (`properties`: dict[str, str]); " +
          "workers must offer the same (//remote:workers starts such workers).",
    fields = {
        "properties": provider_field(dict),
    },
)

def _platforms_impl(ctx: AnalysisContext) -> list[Provider]:
    configuration = ConfigurationInfo(constraints = {}, values = {})
    if ctx.attrs.remote_execution:
        executor = CommandExecutorConfig(
            local_enabled = True,
            remote_enabled = True,
            remote_cache_enabled = True,
            allow_cache_uploads = True,
            max_cache_upload_mebibytes = ctx.attrs.max_cache_upload_mebibytes,
            remote_execution_properties = ctx.attrs.remote_execution_properties,
            remote_execution_use_case = "buck2-default",
            # buck2's default hybrid races a local run against the remote one and takes the
            # first to finish (on a free local core that is the local run); limited hybrid
            # sends every action that may go remote to the workers, as forge does.
            use_limited_hybrid = True,
        )
    elif ctx.attrs.remote_cache:
        executor = CommandExecutorConfig(
            local_enabled = True,
            remote_enabled = False,
            remote_cache_enabled = True,
            allow_cache_uploads = True,
            max_cache_upload_mebibytes = ctx.attrs.max_cache_upload_mebibytes,
        )
    else:
        executor = CommandExecutorConfig(
            local_enabled = True,
            remote_enabled = False,
        )
    platform = ExecutionPlatformInfo(
        label = ctx.label.raw_target(),
        configuration = configuration,
        executor_config = executor,
    )
    return [
        DefaultInfo(),
        ExecutionPlatformRegistrationInfo(platforms = [platform]),
        RemoteExecutionPropertiesInfo(properties = ctx.attrs.remote_execution_properties),
    ]

platforms = rule(
    impl = _platforms_impl,
    attrs = {
        "max_cache_upload_mebibytes": attrs.int(default = 4096),
        "remote_cache": attrs.bool(default = False),
        "remote_execution": attrs.bool(default = False),
        "remote_execution_properties": attrs.dict(attrs.string(), attrs.string(), default = {}),
    },
    doc = "Registers the execution platform: local, optionally with a remote cache or remote execution.",
)
