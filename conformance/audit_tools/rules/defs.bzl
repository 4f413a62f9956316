# A toolchain naming one command, and rules that run commands in each way forge's
# `audit tools` tells apart.

ToolInfo = provider(fields = ["tool"])

def _tool_toolchain_impl(ctx: AnalysisContext) -> list[Provider]:
    return [DefaultInfo(), ToolInfo(tool = ctx.attrs.tool)]

tool_toolchain = rule(
    impl = _tool_toolchain_impl,
    attrs = {"tool": attrs.string()},
    is_toolchain_rule = True,
)

def _runs_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("out.txt")
    argv = [ctx.attrs.toolchain[ToolInfo].tool if a == "$TOOL" else a for a in ctx.attrs.argv]
    ctx.actions.run(cmd_args(argv, out.as_output(), ctx.attrs.srcs), category = "runs")
    return [DefaultInfo(default_output = out)]

runs = rule(
    impl = _runs_impl,
    attrs = {
        "argv": attrs.list(attrs.string()),
        "srcs": attrs.list(attrs.source(), default = []),
        "toolchain": attrs.toolchain_dep(providers = [ToolInfo], default = "//pkg:tool"),
    },
)

def _script_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("out.txt")
    ctx.actions.run(cmd_args(ctx.attrs.script, out.as_output()), category = "script")
    return [DefaultInfo(default_output = out)]

script = rule(
    impl = _script_impl,
    attrs = {"script": attrs.source()},
)

def _bare_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("out.txt")
    ctx.actions.run(cmd_args("python3", "-c", "pass", out.as_output()), category = "bare")
    return [DefaultInfo(default_output = out)]

bare = rule(
    impl = _bare_impl,
    attrs = {},
)
