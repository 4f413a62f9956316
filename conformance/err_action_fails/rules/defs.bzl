def _broken_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("never.txt")
    script = "echo partial > \"$0\"; echo out-line; echo err-first >&2; echo err-tail >&2; exit $1"
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", script, out.as_output(), ctx.attrs.code),
        category = "failing_step",
        identifier = "the_identifier",
    )
    return [DefaultInfo(default_output = out)]

broken = rule(
    impl = _broken_impl,
    attrs = {"code": attrs.string()},
)
