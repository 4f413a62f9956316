"""The FINN toolchain: the light finn-plus 1.6.1 environment that `./forge` builds at
.venv/finn from tools/bootstrap/python/finn/, and the flow scripts under finn/flow/, each
with only the files it imports.
"""

load(":system.bzl", "probe_tool_version")

FinnToolchainInfo = provider(
    doc = "`scripts`: dict project-relative script path -> RunInfo, the venv's interpreter " +
          "running that script, carrying as inputs only the files the script runs and " +
          "imports (its entry of the catalogue the toolchain is given) and the version " +
          "file (`python --version` + `pip freeze` of the venv), so editing one script " +
          "re-runs only the actions that run it; `interpreter`: RunInfo, the interpreter " +
          "with the version file only (for a script a target brings, e.g. a training " +
          "script); `python`: RunInfo, the interpreter carrying every script and the " +
          "version file (for tests, which may import any of them). The interpreter is " +
          "project-relative (`[forge] sandbox_passthrough` makes .venv visible to forge's " +
          "actions). `local_only`: bool, True: the interpreter lives in " +
          "this checkout's environment, not among any action's inputs, so every action " +
          "running `python` must pass `local_only = True` (a remote worker has no venv); " +
          "`fpga`: str, \"sim\" (front-end steps only) or \"vitis\"; `amd_only_steps`: " +
          "dict step -> the AMD tools it needs (refused under sim); `partitioner`: RunInfo " +
          "of finn-partition; `executor`: RunInfo of finn-exec, the functional executor.",
    fields = {
        "amd_only_steps": provider_field(dict),
        "executor": provider_field(RunInfo),
        "fpga": provider_field(str),
        "interpreter": provider_field(RunInfo),
        "local_only": provider_field(bool),
        "partitioner": provider_field(RunInfo),
        "python": provider_field(RunInfo),
        "scripts": provider_field(dict),
    },
)

def _finn_toolchain_impl(ctx: AnalysisContext) -> list[Provider]:
    python = ctx.attrs.venv + "/bin/python"
    version = probe_tool_version(ctx, ctx.attrs._probe, [
        [python, "--version"],
        [python, "-m", "pip", "freeze", "--all"],
    ])
    scripts = {}
    every = []
    for path, dep in ctx.attrs.scripts.items():
        files = dep[DefaultInfo].default_outputs
        scripts[path] = RunInfo(args = cmd_args(python, path, hidden = files + [version]))
        every += files
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
            interpreter = RunInfo(args = cmd_args(python, hidden = [version])),
            python = RunInfo(args = cmd_args(python, hidden = every + [version])),
            scripts = scripts,
        ),
    ]

finn_toolchain = rule(
    impl = _finn_toolchain_impl,
    attrs = {
        "amd_only_steps": attrs.dict(attrs.string(), attrs.string(), doc = "step -> the AMD tools it needs (finn/flow/steps.bzl)"),
        "executor": attrs.exec_dep(providers = [RunInfo], doc = "finn-exec"),
        "fpga": attrs.enum(["sim", "vitis"], default = "sim"),
        "partitioner": attrs.exec_dep(providers = [RunInfo], doc = "finn-partition"),
        "scripts": attrs.dict(
            attrs.string(),
            attrs.dep(),
            doc = "project-relative script path -> the files it runs and imports (finn/flow/steps.bzl FLOW_SCRIPTS, one filegroup each in finn/flow/BUCK)",
        ),
        "venv": attrs.string(default = ".venv/finn"),
        "_probe": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//rules/tools/action:action",
        )),
    },
    is_toolchain_rule = True,
    doc = "FINN (finn-plus 1.6.1 without torch) in the venv `venv`, with the flow scripts, the step catalogue, the partitioner and the functional executor.",
)
