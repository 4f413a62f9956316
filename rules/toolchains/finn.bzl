"""The FINN toolchain: the light finn-plus 1.6.1 environment that `./forge` builds at
.venv/finn from tools/bootstrap/python/finn/, and the flow scripts under finn/flow/.
"""

load(":system.bzl", "probe_tool_version")

FinnToolchainInfo = provider(
    doc = "`python`: RunInfo, the venv's interpreter (project-relative; `[forge] " +
          "sandbox_passthrough` makes .venv visible to forge's actions) carrying as inputs " +
          "the flow scripts (finn/flow/*.py) and the version file (`python --version` + " +
          "`pip freeze` of the venv), so an environment or script change re-runs every " +
          "command that starts with it; `local_only`: bool, True: the interpreter lives in " +
          "this checkout's environment, not among any action's inputs, so every action " +
          "running `python` must pass `local_only = True` (a remote worker has no venv); " +
          "`fpga`: str, \"sim\" (front-end steps only) or \"vitis\"; `amd_only_steps`: " +
          "dict step -> the AMD tools it needs (refused under sim); `partitioner`: RunInfo " +
          "of finn-partition; `executor`: RunInfo of finn-exec, the functional executor.",
    fields = {
        "amd_only_steps": provider_field(dict),
        "executor": provider_field(RunInfo),
        "fpga": provider_field(str),
        "local_only": provider_field(bool),
        "partitioner": provider_field(RunInfo),
        "python": provider_field(RunInfo),
    },
)

def _finn_toolchain_impl(ctx: AnalysisContext) -> list[Provider]:
    python = ctx.attrs.venv + "/bin/python"
    version = probe_tool_version(ctx, ctx.attrs._probe, [
        [python, "--version"],
        [python, "-m", "pip", "freeze", "--all"],
    ])
    return [
        DefaultInfo(default_output = version),
        FinnToolchainInfo(
            amd_only_steps = ctx.attrs.amd_only_steps,
            executor = ctx.attrs.executor[RunInfo],
            fpga = ctx.attrs.fpga,
            # The venv is this machine's, outside the graph: the toolchain, not an engine
            # heuristic, says its commands run here.
            local_only = True,
            partitioner = ctx.attrs.partitioner[RunInfo],
            python = RunInfo(args = cmd_args(
                python,
                hidden = ctx.attrs.scripts[DefaultInfo].default_outputs + [version],
            )),
        ),
    ]

finn_toolchain = rule(
    impl = _finn_toolchain_impl,
    attrs = {
        "amd_only_steps": attrs.dict(attrs.string(), attrs.string(), doc = "step -> the AMD tools it needs (finn/flow/steps.bzl)"),
        "executor": attrs.exec_dep(providers = [RunInfo], doc = "finn-exec"),
        "fpga": attrs.enum(["sim", "vitis"], default = "sim"),
        "partitioner": attrs.exec_dep(providers = [RunInfo], doc = "finn-partition"),
        "scripts": attrs.dep(doc = "the flow scripts (finn/flow:scripts)"),
        "venv": attrs.string(default = ".venv/finn"),
        "_probe": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//rules/tools/action:action",
        )),
    },
    is_toolchain_rule = True,
    doc = "FINN (finn-plus 1.6.1 without torch) in the venv `venv`, with the flow scripts, the step catalogue, the partitioner and the functional executor.",
)
