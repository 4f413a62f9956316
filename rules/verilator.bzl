# Verilator in the build graph: lint checks as cached build actions, and testbenches built
# into simulation binaries by one action (every source an input) and run as tests.

load("@toolchains//:verilator.bzl", "VerilatorToolchainInfo")

def _include_dirs(headers: list) -> list:
    # -I<dir of each header>; the header itself is a hidden input of the action
    return [cmd_args(h, parent = 1, format = "-I{}") for h in headers]

def _verilator_lint_impl(ctx: AnalysisContext) -> list[Provider]:
    tc = ctx.attrs._verilator[VerilatorToolchainInfo]
    stamps = []
    for i, config in enumerate(ctx.attrs.configs):
        out = ctx.actions.declare_output("lint_{}.log".format(i))
        ctx.actions.run(
            cmd_args(
                tc.stamp,
                out.as_output(),
                "--",
                tc.verilator,
                "--lint-only",
                "-Wall",
                config,
                _include_dirs(ctx.attrs.headers),
                "--top-module",
                ctx.attrs.top,
                ctx.attrs.srcs,
                hidden = [tc.version] + ctx.attrs.headers,
            ),
            category = "verilator_lint",
            identifier = str(i),
        )
        stamps.append(out)
    return [DefaultInfo(default_outputs = stamps)]

verilator_lint = rule(
    impl = _verilator_lint_impl,
    attrs = {
        "configs": attrs.list(attrs.list(attrs.string()), default = [[]]),
        "headers": attrs.list(attrs.source(), default = []),
        "srcs": attrs.list(attrs.source()),
        "top": attrs.string(),
        "_verilator": attrs.default_only(attrs.toolchain_dep(
            default = "toolchains//:verilator",
            providers = [VerilatorToolchainInfo],
        )),
    },
    doc = "`verilator --lint-only -Wall` of `srcs` with top `top`, once per entry of " +
          "`configs` (extra arguments such as -D/-G). Building the target fails on any warning.",
)

def _verilator_test_impl(ctx: AnalysisContext) -> list[Provider]:
    tc = ctx.attrs._verilator[VerilatorToolchainInfo]
    model = ctx.actions.declare_output("model", dir = True)
    ctx.actions.run(
        cmd_args(
            tc.build_model,
            model.as_output(),
            "--",
            "--binary",
            "--timing",
            "-j",
            "2",
            # testbench code is not held to the RTL's lint rules (verilator_lint covers those)
            "-Wno-fatal",
            "-Wno-lint",
            "-Wno-style",
            ctx.attrs.args,
            _include_dirs(ctx.attrs.headers),
            "--top-module",
            ctx.attrs.top,
            ctx.attrs.srcs,
            "-o",
            "sim",
            hidden = [tc.version] + ctx.attrs.headers,
        ),
        category = "verilator_model",
    )
    binary = cmd_args(model, format = "{}/sim")
    command = cmd_args(tc.run_sim, binary)
    for run in ctx.attrs.runs:
        command.add("--")
        command.add(run.split(" "))
    return [
        DefaultInfo(default_output = model),
        RunInfo(args = cmd_args(binary)),
        ExternalRunnerTestInfo(
            type = "verilator",
            command = [command],
            labels = ctx.attrs.labels,
        ),
    ]

verilator_test = rule(
    impl = _verilator_test_impl,
    attrs = {
        "args": attrs.list(attrs.string(), default = []),
        "headers": attrs.list(attrs.source(), default = []),
        "labels": attrs.list(attrs.string(), default = []),
        "runs": attrs.list(attrs.string(), default = [""]),
        "srcs": attrs.list(attrs.source()),
        "top": attrs.string(),
        "_verilator": attrs.default_only(attrs.toolchain_dep(
            default = "toolchains//:verilator",
            providers = [VerilatorToolchainInfo],
        )),
    },
    doc = "A SystemVerilog testbench built with `verilator --binary --timing` (`args`: " +
          "-D/-G options; `headers`: files `include`d, their directories become -I). The " +
          "test runs the binary once per entry of `runs` (space-separated plusargs); a " +
          "failing run prints its seed and cycle.",
)
