"""The HDL toolchain of the open-source flow: Verilator from PATH (Debian's 5.006 here), with
the helper scripts rules/verilator.bzl runs inside its actions.
"""

load(":system.bzl", "probe_tool_version")

# How rules/verilator.bzl's verilator_test builds a testbench binary; the toolchain's shared
# runtime objects are compiled with the same arguments, so the two agree.
VERILATOR_BINARY_ARGS = ["--binary", "--timing", "-j", "2"]

# A top with a delay, so Verilator's timing runtime (verilated_timing.cpp) is among the
# runtime files it compiles, as in every testbench with delays.
_RUNTIME_TOP = "module forge_verilator_runtime;\n  initial begin\n    #1 $finish;\n  end\nendmodule\n"

VerilatorToolchainInfo = provider(
    doc = "How rules/verilator.bzl runs Verilator. `verilator`: str, the command; " +
          "`version`: Artifact, `verilator --version` output (an input of every Verilator " +
          "action, so an upgrade rebuilds every model); `build_model`: RunInfo, `OUT_DIR " +
          "VERILATOR -- ARGS`: runs the toolchain's Verilator into a declared directory; `runtime`: " +
          "Artifact, Verilator's runtime library compiled once for `VERILATOR_BINARY_ARGS` " +
          "(`build_model --runtime` links it into a model); `stamp`: RunInfo, turns a check into an " +
          "action with one output; `run_sim`: RunInfo, runs a simulation once per plusarg set.",
    fields = ["build_model", "run_sim", "runtime", "stamp", "verilator", "version"],
)

def _verilator_toolchain_impl(ctx: AnalysisContext) -> list[Provider]:
    version = probe_tool_version(ctx, ctx.attrs._probe, [[ctx.attrs.verilator, "--version"]])
    top = ctx.actions.write("verilator_runtime.sv", _RUNTIME_TOP)
    runtime = ctx.actions.declare_output("runtime", dir = True)
    ctx.actions.run(
        cmd_args(
            ctx.attrs._build_model[RunInfo],
            "--runtime-only",
            runtime.as_output(),
            ctx.attrs.verilator,
            "--",
            VERILATOR_BINARY_ARGS,
            top,
            "--top-module",
            "forge_verilator_runtime",
            "-o",
            "sim",
            hidden = [version],
        ),
        category = "verilator_runtime",
    )
    return [
        DefaultInfo(default_output = version),
        VerilatorToolchainInfo(
            build_model = ctx.attrs._build_model[RunInfo],
            run_sim = ctx.attrs._run_sim[RunInfo],
            runtime = runtime,
            stamp = ctx.attrs._stamp[RunInfo],
            verilator = ctx.attrs.verilator,
            version = version,
        ),
    ]

verilator_toolchain = rule(
    impl = _verilator_toolchain_impl,
    attrs = {
        "verilator": attrs.string(default = "verilator"),
        "_build_model": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//rules/tools/verilator:build_model",
        )),
        "_probe": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//rules/tools/toolchain:probe_version",
        )),
        "_run_sim": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//rules/tools/verilator:run_sim",
        )),
        "_stamp": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//rules/tools/verilator:stamp",
        )),
    },
    is_toolchain_rule = True,
    doc = "Verilator found on PATH, identified by `verilator --version`.",
)
