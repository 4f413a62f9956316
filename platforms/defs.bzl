"""The execution platform: every action runs on the local machine. With `remote_cache = True`
the same platform also reads from and uploads to the remote cache configured in
`[buck2_re_client]` (local execution + remote cache, buck2 >= 2025-04).
"""

def _platforms_impl(ctx: AnalysisContext) -> list[Provider]:
    configuration = ConfigurationInfo(constraints = {}, values = {})
    if ctx.attrs.remote_cache:
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
    ]

platforms = rule(
    impl = _platforms_impl,
    attrs = {
        "max_cache_upload_mebibytes": attrs.int(default = 4096),
        "remote_cache": attrs.bool(default = False),
    },
    doc = "Registers the local execution platform, optionally with a remote cache.",
)
