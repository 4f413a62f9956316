def _lazy_impl(ctx: AnalysisContext) -> list[Provider]:
    written = ctx.actions.declare_output("written.txt")
    missing = ctx.actions.declare_output("missing.txt")
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", "echo w > \"$0\"", written.as_output(), missing.as_output()),
        category = "lazy_step",
    )
    return [DefaultInfo(default_outputs = [written, missing])]

lazy = rule(
    impl = _lazy_impl,
    attrs = {},
)
