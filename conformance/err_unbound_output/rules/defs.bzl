def _unbound_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("never_bound.txt")
    return [DefaultInfo(default_output = out)]

unbound = rule(
    impl = _unbound_impl,
    attrs = {},
)
