"""Yosys, the synthesis front end of the open-source flow (area estimates, elaboration checks).
"""

load(":system.bzl", "probe_tool_version")

YosysToolchainInfo = provider(
    doc = "`yosys`: str, the command; `version`: Artifact, `yosys -V` output (an input of " +
          "every action or test that runs it).",
    fields = {
        "version": provider_field(Artifact),
        "yosys": provider_field(str),
    },
)

def _yosys_toolchain_impl(ctx: AnalysisContext) -> list[Provider]:
    version = probe_tool_version(ctx, ctx.attrs._probe, [[ctx.attrs.yosys, "-V"]])
    return [
        DefaultInfo(default_output = version),
        YosysToolchainInfo(version = version, yosys = ctx.attrs.yosys),
    ]

yosys_toolchain = rule(
    impl = _yosys_toolchain_impl,
    attrs = {
        "yosys": attrs.string(default = "yosys"),
        "_probe": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//rules/tools/action:action",
        )),
    },
    is_toolchain_rule = True,
    doc = "Yosys found on PATH, identified by `yosys -V`.",
)
