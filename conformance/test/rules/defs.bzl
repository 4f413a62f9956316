def _script_test_impl(ctx: AnalysisContext) -> list[Provider]:
    command = ["/bin/sh", ctx.attrs.script] + ctx.attrs.args
    return [
        DefaultInfo(),
        ExternalRunnerTestInfo(
            type = "custom",
            command = command,
            env = ctx.attrs.env,
            labels = ctx.attrs.labels,
        ),
    ]

script_test = rule(
    impl = _script_test_impl,
    attrs = {
        "args": attrs.list(attrs.source(), default = []),
        "env": attrs.dict(attrs.string(), attrs.string(), default = {}),
        "labels": attrs.list(attrs.string(), default = []),
        "script": attrs.source(),
    },
)

def _not_a_test_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("lib.txt")
    ctx.actions.write(out, "lib")
    return [DefaultInfo(default_output = out)]

not_a_test = rule(
    impl = _not_a_test_impl,
    attrs = {},
)

def _broken_test_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("never.sh")
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", "exit 1", out.as_output()),
        category = "broken_build",
    )
    return [
        DefaultInfo(default_output = out),
        ExternalRunnerTestInfo(type = "custom", command = ["/bin/sh", out]),
    ]

broken_test = rule(
    impl = _broken_test_impl,
    attrs = {},
)
