"""Verilator in the build graph: lint checks as cached build actions, and testbenches built
into simulation binaries by one action (every source an input) and run as tests.

`verilator_lint` runs one `verilator_lint` action per configuration (`lint_<i>.log`) and is a
test that fails when any configuration warns. `verilator_test` builds the testbench with one
`verilator_model` action (`model/`, `verilator --binary --timing`). `verilator_link_bench` builds the AuroraFlow bench
testbench in both modes and is a test of its throughput goal. `hdl_script_test` and
`hdl_script_binary` give their script the HDL tools of their toolchains in `VERILATOR`,
`IVERILOG`, `VVP`, `YOSYS`, `PYTHON` (no other copy runs), every tool's version an input.
"""

load("//rules/toolchains:iverilog.bzl", "IverilogToolchainInfo")
load("//rules/toolchains:python.bzl", "PythonToolchainInfo")
load("//rules/toolchains:verilator.bzl", "VERILATOR_BINARY_ARGS", "VerilatorToolchainInfo")
load("//rules/toolchains:yosys.bzl", "YosysToolchainInfo")

def _toolchain_attr(name: str, provider):
    return attrs.default_only(attrs.toolchain_dep(
        default = "toolchains//:" + name,
        providers = [provider],
    ))

# The toolchain attribute of each HDL tool, for every rule that runs one of them.
HDL_TOOLCHAIN_ATTRS = {
    "_iverilog": _toolchain_attr("iverilog", IverilogToolchainInfo),
    "_python": _toolchain_attr("python", PythonToolchainInfo),
    "_verilator": _toolchain_attr("verilator", VerilatorToolchainInfo),
    "_yosys": _toolchain_attr("yosys", YosysToolchainInfo),
}

def include_dirs(headers: list) -> list:
    # -I<dir of each header>; the header itself is a hidden input of the action
    return [cmd_args(h, parent = 1, format = "-I{}") for h in headers]

def verilator_model(ctx: AnalysisContext, args: list, headers: list, category: str, shared_runtime: bool = False, name: str = "model") -> Artifact:
    """`model/` (or `name/`): what `verilator ARGS --Mdir model` writes, built by the toolchain's
    build_model (which drops Verilator's timestamped files). `headers` are the files the
    sources `include` (ARGS name their directories with `include_dirs`); they and the
    toolchain's version are inputs. `shared_runtime`: ARGS start with
    `VERILATOR_BINARY_ARGS`, and the model links the toolchain's runtime objects instead of
    compiling its own."""
    tc = ctx.attrs._verilator[VerilatorToolchainInfo]
    model = ctx.actions.declare_output(name, dir = True)

    # one model per target keeps the category's default identifier
    identifier = {} if name == "model" else {"identifier": name}
    ctx.actions.run(
        cmd_args(
            tc.build_model,
            ["--runtime", tc.runtime] if shared_runtime else [],
            model.as_output(),
            tc.verilator,
            "--",
            args,
            # Verilator 5.006 reports an elaboration-time $fatal (a refused configuration,
            # hw/aurora_flow/rtl/af_refuse.svh) as the warning USERFATAL, which -Wno-fatal would
            # let through: it stays an error in every model
            "-Werror-USERFATAL",
            hidden = [tc.version] + headers,
        ),
        category = category,
        **identifier
    )
    return model

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
                include_dirs(ctx.attrs.headers),
                "--top-module",
                ctx.attrs.top,
                ctx.attrs.srcs,
                hidden = [tc.version] + ctx.attrs.headers,
            ),
            category = "verilator_lint",
            identifier = str(i),
        )
        stamps.append(out)

    # the test passes when every lint action has built (a warning fails the build, and so
    # the test); it prints the logs
    return [
        DefaultInfo(default_outputs = stamps),
        ExternalRunnerTestInfo(
            type = "verilator_lint",
            command = [cmd_args("cat", stamps)],
            labels = ctx.attrs.labels,
        ),
    ]

verilator_lint = rule(
    impl = _verilator_lint_impl,
    attrs = {
        "configs": attrs.list(attrs.list(attrs.string()), default = [[]]),
        "headers": attrs.list(attrs.source(), default = []),
        "labels": attrs.list(attrs.string(), default = []),
        "srcs": attrs.list(attrs.source()),
        "top": attrs.string(),
        "_verilator": HDL_TOOLCHAIN_ATTRS["_verilator"],
    },
    doc = "`verilator --lint-only -Wall` of `srcs` with top `top`, once per entry of " +
          "`configs` (extra arguments such as -D/-G), as cached build actions. Building the " +
          "target fails on any warning; as a test it fails the same way and prints the logs.",
)

def _cxx_opt_args(ctx: AnalysisContext, opt: [str, None]) -> list:
    """Verilator's `-MAKEFLAGS` for the C++ optimisation level of a model's own code (make's
    OPT_FAST and OPT_SLOW; the shared runtime keeps OPT_GLOBAL, so it still links)."""
    if opt == None:
        return []
    if opt not in ["-O0", "-O1", "-O2", "-Os"]:
        fail("{}: cxx_opt = \"{}\": give one of -O0, -O1, -O2, -Os".format(ctx.label, opt))
    return ["-MAKEFLAGS", "OPT_FAST=" + opt, "-MAKEFLAGS", "OPT_SLOW=" + opt]

def _testbench_model(ctx: AnalysisContext, params: list = [], name: str = "model", cxx_opt: [str, None] = None) -> Artifact:
    """The `verilator --binary` model of a testbench rule's `srcs` (top `top`, `params` then
    `args`, `headers`), its binary `sim`; `cxx_opt`: see `verilator_test`."""
    return verilator_model(
        ctx,
        VERILATOR_BINARY_ARGS + [
            # testbench code is not held to the RTL's lint rules (verilator_lint covers those)
            "-Wno-fatal",
            "-Wno-lint",
            "-Wno-style",
            params,
            ctx.attrs.args,
            include_dirs(ctx.attrs.headers),
            "--top-module",
            ctx.attrs.top,
            ctx.attrs.srcs,
            "-o",
            "sim",
            _cxx_opt_args(ctx, cxx_opt),
        ],
        ctx.attrs.headers,
        "verilator_model",
        shared_runtime = True,
        name = name,
    )

def _verilator_test_impl(ctx: AnalysisContext) -> list[Provider]:
    tc = ctx.attrs._verilator[VerilatorToolchainInfo]
    model = _testbench_model(ctx, cxx_opt = ctx.attrs.cxx_opt)
    binary = cmd_args(model, format = "{}/sim")
    command = cmd_args(tc.run_sim, binary)
    for run in ctx.attrs.runs:
        # one argv word per plusarg: run-sim passes each set on as it is
        command.add("--")
        command.add([word for word in run.split(" ") if word])
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
        "cxx_opt": attrs.option(attrs.string(), default = None, doc = "the C++ optimisation level of the model's code (`-O0`, `-O1`, `-O2`, `-Os`; default Verilator's `-Os`): `-O0` where compiling the model takes far longer than its runs"),
        "headers": attrs.list(attrs.source(), default = []),
        "labels": attrs.list(attrs.string(), default = []),
        "runs": attrs.list(attrs.string(), default = [""]),
        "srcs": attrs.list(attrs.source()),
        "top": attrs.string(),
        "_verilator": HDL_TOOLCHAIN_ATTRS["_verilator"],
    },
    doc = "A SystemVerilog testbench built with `verilator --binary --timing` (`args`: " +
          "-D/-G options; `headers`: files `include`d, their directories become -I). The " +
          "test runs the binary once per entry of `runs` (space-separated plusargs); a " +
          "failing run prints its seed and cycle.",
)

def _verilator_link_bench_impl(ctx: AnalysisContext) -> list[Provider]:
    tc = ctx.attrs._verilator[VerilatorToolchainInfo]
    models = {}
    for mode, params in (("stream", ["-GUSE_FRAMING=0"]), ("frame", ["-GUSE_FRAMING=1"])):
        models[mode] = _testbench_model(ctx, params, "model_" + mode)
    command = cmd_args(
        tc.bench,
        "--stream",
        cmd_args(models["stream"], format = "{}/sim"),
        "--frame",
        cmd_args(models["frame"], format = "{}/sim"),
        "--ap-mhz",
        str(ctx.attrs.ap_mhz),
        "--goal-gbps",
        str(ctx.attrs.goal_gbps),
    )
    return [
        DefaultInfo(default_outputs = [models["stream"], models["frame"]]),
        RunInfo(args = command),
        ExternalRunnerTestInfo(
            type = "verilator_bench",
            command = [command],
            labels = ctx.attrs.labels,
        ),
    ]

verilator_link_bench = rule(
    impl = _verilator_link_bench_impl,
    attrs = {
        "ap_mhz": attrs.int(default = 300),
        "args": attrs.list(attrs.string(), default = []),
        "goal_gbps": attrs.int(),
        "headers": attrs.list(attrs.source(), default = []),
        "labels": attrs.list(attrs.string(), default = []),
        "srcs": attrs.list(attrs.source()),
        "top": attrs.string(),
        "_verilator": HDL_TOOLCHAIN_ATTRS["_verilator"],
    },
    doc = "The AuroraFlow link bench: testbench `top` (it prints `RESULT ... bytes=B " +
          "first_ns=X last_ns=Y` per message size) built twice like `verilator_test` " +
          "(`-GUSE_FRAMING=0` and `=1`, plus `args`), both run at `+ap_mhz=<ap_mhz>` by the " +
          "toolchain's `action bench`, which prints the throughput/latency table. As a test it " +
          "fails when the streaming rate at the largest message is below `goal_gbps` Gbit/s; " +
          "`run` prints the same table (it fails the same way).",
)

def _hdl_tools_env(ctx: AnalysisContext) -> (dict, list):
    vl = ctx.attrs._verilator[VerilatorToolchainInfo]
    iv = ctx.attrs._iverilog[IverilogToolchainInfo]
    ys = ctx.attrs._yosys[YosysToolchainInfo]
    py = ctx.attrs._python[PythonToolchainInfo]
    env = {
        "IVERILOG": iv.iverilog,
        "PYTHON": py.interpreter,
        "VERILATOR": vl.verilator,
        "VVP": iv.vvp,
        "YOSYS": ys.yosys,
    }
    return env, [vl.version, iv.version, ys.version, py.version]

def _hdl_script_test_impl(ctx: AnalysisContext) -> list[Provider]:
    env, versions = _hdl_tools_env(ctx)
    for name, tool in ctx.attrs.tools.items():
        env[name] = tool
    tools = list(ctx.attrs.tools.values())
    command = cmd_args("bash", ctx.attrs.test, ctx.attrs.args, hidden = ctx.attrs.data + versions + tools)
    return [
        DefaultInfo(default_output = ctx.attrs.test, other_outputs = ctx.attrs.data),
        ExternalRunnerTestInfo(
            type = "hdl_script",
            command = [command],
            env = env,
            labels = ctx.attrs.labels,
        ),
    ]

hdl_script_test = rule(
    impl = _hdl_script_test_impl,
    attrs = {
        "args": attrs.list(attrs.string(), default = []),
        "data": attrs.list(attrs.source(), default = []),
        "labels": attrs.list(attrs.string(), default = []),
        "test": attrs.source(doc = "a bash script"),
        "tools": attrs.dict(attrs.string(), attrs.source(), default = {}, doc = "project binaries the script runs, by environment variable (built by the graph, e.g. a `cargo_binary`)"),
    } | HDL_TOOLCHAIN_ATTRS,
    doc = "A check script that drives the HDL tools. It gets each tool from its toolchain " +
          "in the environment (`VERILATOR`, `IVERILOG`, `VVP`, `YOSYS`, `PYTHON`), and the " +
          "project's own binaries by the names `tools` gives, and must run no other copy; " +
          "every tool's version is an input of the test.",
)

def _hdl_script_binary_impl(ctx: AnalysisContext) -> list[Provider]:
    env, versions = _hdl_tools_env(ctx)
    run = cmd_args("env")
    for k in sorted(env):
        run.add(cmd_args(k, env[k], delimiter = "="))
    run.add("bash", ctx.attrs.main)
    run.add(cmd_args(hidden = ctx.attrs.resources + versions))
    return [
        DefaultInfo(default_output = ctx.attrs.main, other_outputs = ctx.attrs.resources),
        RunInfo(args = run),
    ]

hdl_script_binary = rule(
    impl = _hdl_script_binary_impl,
    attrs = {
        "main": attrs.source(doc = "a bash script"),
        "resources": attrs.list(attrs.source(), default = []),
    } | HDL_TOOLCHAIN_ATTRS,
    doc = "`run`: a script that drives the HDL tools, given the toolchains' commands in its " +
          "environment as `hdl_script_test` does (the area estimate).",
)
