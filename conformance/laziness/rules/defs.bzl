def _producer_impl(ctx: AnalysisContext) -> list[Provider]:
    used = ctx.actions.declare_output("used.txt")
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", "echo used > \"$0\"", used.as_output()),
        category = "make_used",
    )
    unused = ctx.actions.declare_output("unused.txt")
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", "echo unused > \"$0\"", unused.as_output()),
        category = "make_unused",
    )
    return [DefaultInfo(
        default_output = used,
        sub_targets = {"unused": [DefaultInfo(default_output = unused)]},
    )]

producer = rule(
    impl = _producer_impl,
    attrs = {},
)

def _consumer_impl(ctx: AnalysisContext) -> list[Provider]:
    src = ctx.attrs.dep[DefaultInfo].default_outputs[0]
    out = ctx.actions.declare_output("consumed.txt")
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", "cat \"$1\" > \"$0\"", out.as_output(), src),
        category = "consume",
    )
    return [DefaultInfo(default_output = out)]

consumer = rule(
    impl = _consumer_impl,
    attrs = {"dep": attrs.dep()},
)
