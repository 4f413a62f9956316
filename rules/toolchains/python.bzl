"""Python toolchains: the system interpreter, or one of the virtual environments that
`./forge` creates under `.venv/<name>` from `tools/bootstrap/python/<name>/`.
"""

load(":system.bzl", "probe_tool_version")

PythonToolchainInfo = provider(
    doc = "`interpreter`: str, the python command (project-relative for a venv, which " +
          "`[forge] sandbox_passthrough` makes visible to actions); `venv`: str, the venv " +
          "directory or \"\"; `version`: Artifact, `python --version` output, an input of " +
          "every action that runs python; `local_only`: bool, True for a venv (this " +
          "checkout's environment, not among any action's inputs): an action running " +
          "`interpreter` passes it as `local_only` (a remote worker has no venv).",
    fields = {
        "interpreter": provider_field(str),
        "local_only": provider_field(bool),
        "venv": provider_field(str),
        "version": provider_field(Artifact),
    },
)

def _python_toolchain_impl(ctx: AnalysisContext) -> list[Provider]:
    if ctx.attrs.venv:
        interpreter = ctx.attrs.venv + "/bin/python"
        commands = [[interpreter, "--version"], [interpreter, "-m", "pip", "freeze", "--all"]]
    else:
        interpreter = ctx.attrs.interpreter
        commands = [[interpreter, "--version"]]
    version = probe_tool_version(ctx, ctx.attrs._probe, commands)
    return [
        DefaultInfo(default_output = version),
        PythonToolchainInfo(
            interpreter = interpreter,
            local_only = bool(ctx.attrs.venv),
            venv = ctx.attrs.venv,
            version = version,
        ),
    ]

python_toolchain = rule(
    impl = _python_toolchain_impl,
    attrs = {
        "interpreter": attrs.string(default = "python3"),
        "venv": attrs.string(default = ""),
        "_probe": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//rules/tools/action:action",
        )),
    },
    is_toolchain_rule = True,
    doc = "`venv = \".venv/<name>\"` uses the environment `./forge` builds from " +
          "tools/bootstrap/python/<name>/; otherwise `interpreter` from PATH.",
)
