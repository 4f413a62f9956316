NeededInfo = provider(fields = ["value"])

def _plain_impl(ctx: AnalysisContext) -> list[Provider]:
    return [DefaultInfo()]

plain = rule(
    impl = _plain_impl,
    attrs = {},
)

def _needs_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("v.txt")
    ctx.actions.write(out, ctx.attrs.dep[NeededInfo].value)
    return [DefaultInfo(default_output = out)]

needs = rule(
    impl = _needs_impl,
    attrs = {"dep": attrs.dep(providers = [NeededInfo])},
)

def _no_default_impl(ctx: AnalysisContext) -> list[Provider]:
    return [NeededInfo(value = 1)]

no_default = rule(
    impl = _no_default_impl,
    attrs = {},
)
