def _counted_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("count.txt")
    ctx.actions.write(out, str(ctx.attrs.count))
    return [DefaultInfo(default_output = out)]

counted = rule(
    impl = _counted_impl,
    attrs = {"count": attrs.int()},
)
