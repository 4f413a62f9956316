"""The FINN toolchain: the light finn-plus 1.6.1 environment that `./forge` builds at
.venv/finn from tools/bootstrap/python/finn/, and the flow scripts under finn/flow/.
"""

load(":system.bzl", "probe_tool_version")

FinnToolchainInfo = provider(
    doc = "`python`: str, the venv's interpreter (project-relative; `[forge] " +
          "sandbox_passthrough` makes .venv visible to actions); `version`: Artifact, " +
          "`python --version` + `pip freeze` of the venv, an input of every FINN action so " +
          "an environment change re-runs them; `scripts`: list[Artifact], finn/flow/*.py; " +
          "`fpga`: str, \"sim\" (front-end steps only) or \"vitis\".",
    fields = ["python", "version", "scripts", "fpga"],
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
            python = python,
            version = version,
            scripts = ctx.attrs.scripts[DefaultInfo].default_outputs,
            fpga = ctx.attrs.fpga,
        ),
    ]

finn_toolchain = rule(
    impl = _finn_toolchain_impl,
    attrs = {
        "fpga": attrs.enum(["sim", "vitis"], default = "sim"),
        "scripts": attrs.dep(default = "root//finn/flow:scripts"),
        "venv": attrs.string(default = ".venv/finn"),
        "_probe": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//rules/tools/action:action",
        )),
    },
    is_toolchain_rule = True,
    doc = "FINN (finn-plus 1.6.1 without torch) in the venv `venv`, with the flow scripts.",
)
