def _echo_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("out.txt")
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", "echo ran > \"$1\"", "--", out.as_output()),
        allow_cache_upload = True,
        category = "echo",
    )
    return [DefaultInfo(default_output = out)]

echo = rule(
    impl = _echo_impl,
    attrs = {},
)
