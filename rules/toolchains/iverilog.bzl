"""Icarus Verilog, the second simulator of the open-source flow: the compiler `iverilog` and
its runtime `vvp` (Debian's iverilog 11 here), identified by both tools' versions.
"""

load(":system.bzl", "probe_tool_version")

IverilogToolchainInfo = provider(
    doc = "`iverilog`: str, the compiler command; `vvp`: str, the simulation runtime; " +
          "`version`: Artifact, `iverilog -V` and `vvp -V` output (an input of every action " +
          "or test that runs them).",
    fields = {
        "iverilog": provider_field(str),
        "version": provider_field(Artifact),
        "vvp": provider_field(str),
    },
)

def _iverilog_toolchain_impl(ctx: AnalysisContext) -> list[Provider]:
    version = probe_tool_version(ctx, ctx.attrs._probe, [
        [ctx.attrs.iverilog, "-V"],
        [ctx.attrs.vvp, "-V"],
    ])
    return [
        DefaultInfo(default_output = version),
        IverilogToolchainInfo(iverilog = ctx.attrs.iverilog, version = version, vvp = ctx.attrs.vvp),
    ]

iverilog_toolchain = rule(
    impl = _iverilog_toolchain_impl,
    attrs = {
        "iverilog": attrs.string(default = "iverilog"),
        "vvp": attrs.string(default = "vvp"),
        "_probe": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//rules/tools/action:action",
        )),
    },
    is_toolchain_rule = True,
    doc = "Icarus Verilog (`iverilog` + `vvp`) found on PATH, identified by their `-V` output.",
)
