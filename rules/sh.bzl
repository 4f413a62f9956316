"""Generic rules around shell scripts and plain files: a file group and a script test. Every
file a script reads must be declared (`data`): forge runs actions in a sandbox that holds only
declared inputs.

`filegroup` is how each crate's BUCK exports its files (`glob()` stops at package
boundaries). `sh_test` runs from the project root; exit 0 is a pass.
"""

load("//rules/toolchains:cargo.bzl", "CargoToolchainInfo")
load("//rules/toolchains:python.bzl", "PythonToolchainInfo")

def _filegroup_impl(ctx: AnalysisContext) -> list[Provider]:
    return [DefaultInfo(default_outputs = ctx.attrs.srcs)]

filegroup = rule(
    impl = _filegroup_impl,
    attrs = {
        "srcs": attrs.list(attrs.source(), default = []),
    },
    doc = "Exports a list of files (sources or other targets' outputs) as one target.",
)

def _sh_test_impl(ctx: AnalysisContext) -> list[Provider]:
    interpreter = ctx.attrs.interpreter or "bash"
    env = dict(ctx.attrs.env)
    tools = []
    if ctx.attrs.python:
        # the toolchain's python is in PYTHON, and runs the test unless `interpreter` is set
        python = ctx.attrs.python[PythonToolchainInfo]
        interpreter = ctx.attrs.interpreter or python.interpreter
        env["PYTHON"] = python.interpreter
        tools.append(python.version)
    if ctx.attrs.cargo:
        cargo = ctx.attrs.cargo[CargoToolchainInfo]
        env["CARGO"] = cargo.cargo
        tools.append(cargo.version)
    command = cmd_args(
        interpreter,
        ctx.attrs.test,
        ctx.attrs.args,
        hidden = ctx.attrs.data + tools,
    )
    return [
        DefaultInfo(default_output = ctx.attrs.test, other_outputs = ctx.attrs.data),
        ExternalRunnerTestInfo(
            type = "sh",
            command = [command],
            env = env,
            labels = ctx.attrs.labels,
        ),
    ]

sh_test = rule(
    impl = _sh_test_impl,
    attrs = {
        "args": attrs.list(attrs.string(), default = []),
        "cargo": attrs.option(attrs.toolchain_dep(providers = [CargoToolchainInfo]), default = None),
        "data": attrs.list(attrs.source(), default = []),
        "env": attrs.dict(attrs.string(), attrs.string(), default = {}),
        "interpreter": attrs.option(attrs.string(), default = None),
        "labels": attrs.list(attrs.string(), default = []),
        "python": attrs.option(attrs.toolchain_dep(providers = [PythonToolchainInfo]), default = None),
        "test": attrs.source(),
    },
    doc = "Runs `interpreter test args...` from the project root; exit 0 = pass. " +
          "`data` are the files the test reads (sources or targets, built first). " +
          "`python`: a python toolchain, whose interpreter is in PYTHON and runs the test " +
          "when `interpreter` is not set (default otherwise: bash); `cargo`: a cargo " +
          "toolchain whose cargo is in CARGO; each one's version is an input.",
)
