def _text_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output(ctx.attrs.out)
    ctx.actions.write(out, ctx.attrs.content)
    return [DefaultInfo(default_output = out)]

text = rule(
    impl = _text_impl,
    attrs = {
        "content": attrs.string(),
        "out": attrs.string(default = "out.txt"),
    },
)
