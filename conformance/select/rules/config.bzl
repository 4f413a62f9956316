def _platform_impl(ctx: AnalysisContext) -> list[Provider]:
    return [
        DefaultInfo(),
        PlatformInfo(
            label = str(ctx.label.raw_target()),
            configuration = ConfigurationInfo(constraints = {}, values = {}),
        ),
    ]

platform = rule(
    impl = _platform_impl,
    attrs = {},
    is_configuration_rule = True,
)

def _config_setting_impl(ctx: AnalysisContext) -> list[Provider]:
    return [
        DefaultInfo(),
        ConfigurationInfo(constraints = {}, values = ctx.attrs.values),
    ]

config_setting = rule(
    impl = _config_setting_impl,
    attrs = {"values": attrs.dict(attrs.string(), attrs.string(), default = {})},
    is_configuration_rule = True,
)
