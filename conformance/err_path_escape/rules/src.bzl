def _src_impl(ctx: AnalysisContext) -> list[Provider]:
    return [DefaultInfo(default_output = ctx.attrs.src)]

src_rule = rule(
    impl = _src_impl,
    attrs = {"src": attrs.source()},
)
