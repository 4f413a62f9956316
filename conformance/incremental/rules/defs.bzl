def _link_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output(ctx.label.name + ".out")
    inputs = [ctx.attrs.src]
    if ctx.attrs.dep:
        inputs.append(ctx.attrs.dep[DefaultInfo].default_outputs[0])
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", "cat \"$@\" > \"$0\"", out.as_output(), inputs),
        category = "link",
    )
    return [DefaultInfo(default_output = out)]

link = rule(
    impl = _link_impl,
    attrs = {
        "dep": attrs.option(attrs.dep(), default = None),
        "src": attrs.source(),
    },
)
