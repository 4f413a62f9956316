"""Generic rules around shell scripts and plain files: a file group and a script test. Every
file a script reads must be declared (`data`): forge runs actions in a sandbox that holds only
declared inputs.

`filegroup` is how each crate's BUCK exports its files (`glob()` stops at package
boundaries). `sh_test` runs from the project root; exit 0 is a pass.
"""

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
    command = cmd_args(
        ctx.attrs.interpreter,
        ctx.attrs.test,
        ctx.attrs.args,
        hidden = ctx.attrs.data,
    )
    return [
        DefaultInfo(default_output = ctx.attrs.test, other_outputs = ctx.attrs.data),
        ExternalRunnerTestInfo(
            type = "sh",
            command = [command],
            env = ctx.attrs.env,
            labels = ctx.attrs.labels,
        ),
    ]

sh_test = rule(
    impl = _sh_test_impl,
    attrs = {
        "args": attrs.list(attrs.string(), default = []),
        "data": attrs.list(attrs.source(), default = []),
        "env": attrs.dict(attrs.string(), attrs.string(), default = {}),
        "interpreter": attrs.string(default = "bash"),
        "labels": attrs.list(attrs.string(), default = []),
        "test": attrs.source(),
    },
    doc = "Runs `interpreter test args...` from the project root; exit 0 = pass. " +
          "`data` are the files the test reads (sources or targets, built first).",
)
