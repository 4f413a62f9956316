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

def _constraint_setting_impl(ctx: AnalysisContext) -> list[Provider]:
    return [DefaultInfo(), ConstraintSettingInfo(label = ctx.label.raw_target())]

constraint_setting = rule(
    impl = _constraint_setting_impl,
    attrs = {},
    is_configuration_rule = True,
)

def _constraint_value_impl(ctx: AnalysisContext) -> list[Provider]:
    setting = ctx.attrs.setting[ConstraintSettingInfo]
    value = ConstraintValueInfo(setting = setting, label = ctx.label.raw_target())
    return [
        DefaultInfo(),
        value,
        ConfigurationInfo(constraints = {setting.label: value}, values = {}),
    ]

constraint_value = rule(
    impl = _constraint_value_impl,
    attrs = {"setting": attrs.configuration_label()},
    is_configuration_rule = True,
)
