"""The HTML page of an inference run (host/run_report's aurora-report) as a build action, and
a test that opens such a page in a browser toolchain.

`run_report` runs `//host/run_report:aurora-report` in one action `run_report`
(`report.html`). `page_test` runs `bash test args...` from the project root, each tool
toolchain's command in the env as `TOOL_<NAME>`.
"""

load("//rules:finn.bzl", "PartitionPlanInfo")
load("//rules/toolchains:system.bzl", "SystemToolInfo", "tool_test_env")

def _run_report_impl(ctx: AnalysisContext) -> list[Provider]:
    plan = ctx.attrs.partition[PartitionPlanInfo]
    out = ctx.actions.declare_output("report.html")
    cmd = cmd_args(
        ctx.attrs._tool[RunInfo],
        "--run",
        ctx.attrs.run,
        "--plan",
        plan.plan,
        "--exec",
        plan.exec,
        "--topology",
        ctx.attrs.topology,
        "--out",
        out.as_output(),
    )
    if ctx.attrs.devices:
        cmd.add("--devices", ctx.attrs.devices)
    ctx.actions.run(cmd, category = "run_report")
    return [DefaultInfo(default_output = out)]

run_report = rule(
    impl = _run_report_impl,
    attrs = {
        "devices": attrs.option(attrs.source(), default = None),
        "partition": attrs.dep(providers = [PartitionPlanInfo]),
        "run": attrs.source(),
        "topology": attrs.source(),
        "_tool": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//host/run_report:aurora-report",
        )),
    },
    doc = "report.html of a run record `run` (run.json of `aurora-host infer`) with the " +
          "deployment's `partition` (plan and executor graphs), `topology` and `devices` " +
          "(the partitioner's budgets).",
)

def _page_test_impl(ctx: AnalysisContext) -> list[Provider]:
    env, hidden = tool_test_env(ctx.attrs.tools)
    return [
        DefaultInfo(default_output = ctx.attrs.test),
        ExternalRunnerTestInfo(
            type = "sh",
            command = [cmd_args("bash", ctx.attrs.test, ctx.attrs.args, hidden = hidden)],
            env = env,
            labels = ctx.attrs.labels,
        ),
    ]

page_test = rule(
    impl = _page_test_impl,
    attrs = {
        "args": attrs.list(attrs.source()),
        "labels": attrs.list(attrs.string(), default = []),
        "test": attrs.source(),
        "tools": attrs.list(attrs.toolchain_dep(providers = [SystemToolInfo]), default = []),
    },
    doc = "Runs `bash test args...` (files, built first) from the project root; each tool " +
          "toolchain's command is in the env as TOOL_<NAME>.",
)
