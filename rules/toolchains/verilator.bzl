"""The HDL toolchain of the open-source flow: Verilator from PATH (Debian's 5.006 here), with
the helpers rules/verilator.bzl runs inside its actions (subcommands of the `action` binary,
rules/tools/action).
"""

load(":system.bzl", "probe_tool_version")

# How rules/verilator.bzl's verilator_test builds a testbench binary; the toolchain's shared
# runtime objects are compiled with the same arguments, so the two agree.
# VM_PARALLEL_BUILDS=0 is verilated.mk's "all .cpp files in one fell swoop" (Verilator 5.006,
# include/verilated.mk): the model's code is one translation unit, so Verilator's headers are
# parsed once instead of once per generated file. Verilator picks the parallel form for larger
# models, which is faster on an idle machine; the suite runs two actions on two cores, where
# the total matters: a testbench model takes 4.3 s of CPU instead of 8.3 s (docs/benchmarks.md).
VERILATOR_BINARY_ARGS = ["--binary", "--timing", "-j", "2", "-MAKEFLAGS", "VM_PARALLEL_BUILDS=0"]

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
          "action with one output; `run_sim`: RunInfo, runs a simulation once per plusarg set (`-- PLUSARGS...` per run); " +
          "`bench`: RunInfo, the AuroraFlow link bench over two models (`action bench`).",
    fields = {
        "bench": provider_field(RunInfo),
        "build_model": provider_field(RunInfo),
        "run_sim": provider_field(RunInfo),
        "runtime": provider_field(Artifact),
        "stamp": provider_field(RunInfo),
        "verilator": provider_field(str),
        "version": provider_field(Artifact),
    },
)

def _verilator_toolchain_impl(ctx: AnalysisContext) -> list[Provider]:
    version = probe_tool_version(ctx, ctx.attrs._action, [[ctx.attrs.verilator, "--version"]])
    tool = ctx.attrs._action[RunInfo]
    build_model = RunInfo(args = cmd_args(tool, "build-model"))
    top = ctx.actions.write("verilator_runtime.sv", _RUNTIME_TOP)
    runtime = ctx.actions.declare_output("runtime", dir = True)
    ctx.actions.run(
        cmd_args(
            build_model,
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
            bench = RunInfo(args = cmd_args(tool, "bench")),
            build_model = build_model,
            run_sim = RunInfo(args = cmd_args(tool, "run-sim")),
            runtime = runtime,
            stamp = RunInfo(args = cmd_args(tool, "stamp")),
            verilator = ctx.attrs.verilator,
            version = version,
        ),
    ]

verilator_toolchain = rule(
    impl = _verilator_toolchain_impl,
    attrs = {
        "verilator": attrs.string(default = "verilator"),
        # the helpers (rules/tools/action): build-model, run-sim, stamp, bench, probe-version
        "_action": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//rules/tools/action:action",
        )),
    },
    is_toolchain_rule = True,
    doc = "Verilator found on PATH, identified by `verilator --version`.",
)
