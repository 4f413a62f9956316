"""A generic toolchain for one command found on PATH (iverilog, yosys, xclbinutil, ...): the
command's name and an artifact holding its version output, which rules put into the inputs
of every action that runs the tool, so a tool upgrade re-runs those actions.
"""

SystemToolInfo = provider(
    doc = "A command on PATH. `tool`: str, the command; `version`: Artifact, its version " +
          "output (add it to `hidden` of each action that runs the tool).",
    fields = {
        "tool": provider_field(str),
        "version": provider_field(Artifact),
    },
)

def tool_test_env(tools: list) -> (dict, list):
    """For a test running system tools (deps with SystemToolInfo): the env `TOOL_<NAME>` =
    command, and the version artifacts to put into the test's inputs."""
    env = {}
    versions = []
    for tc in tools:
        info = tc[SystemToolInfo]
        env["TOOL_" + info.tool.upper().replace("-", "_")] = info.tool
        versions.append(info.version)
    return env, versions

def probe_tool_version(ctx: AnalysisContext, probe: Dependency, commands: list, files: list = [], inputs: list = []) -> Artifact:
    """Declares `version.txt`, written by running each command (a list of strings) with
    `probe` (the `action` helper, rules/tools/action: its `probe-version` subcommand).
    `files`: project-relative paths of identity files a bootstrap step wrote, recorded first;
    `inputs`: artifacts that re-key the probe when they change (the spec those files came from)."""
    out = ctx.actions.declare_output("version.txt")
    args = cmd_args(probe[RunInfo], "probe-version", out.as_output(), hidden = inputs)
    for f in files:
        args.add("--file")
        args.add(f)
    for command in commands:
        args.add("--")
        args.add(command)
    ctx.actions.run(
        args,
        category = "probe_tool_version",
        # It identifies the tool installed on this machine: never taken from a cache another
        # machine filled (its key names the command, not the tool's files).
        local_only = True,
        allow_cache_upload = False,
    )
    return out

def _system_tool_toolchain_impl(ctx: AnalysisContext) -> list[Provider]:
    version = probe_tool_version(ctx, ctx.attrs._probe, [[ctx.attrs.tool] + ctx.attrs.version_args])
    return [
        DefaultInfo(default_output = version),
        SystemToolInfo(tool = ctx.attrs.tool, version = version),
    ]

system_tool_toolchain = rule(
    impl = _system_tool_toolchain_impl,
    attrs = {
        "tool": attrs.string(),
        "version_args": attrs.list(attrs.string(), default = ["--version"]),
        "_probe": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//rules/tools/action:action",
        )),
    },
    is_toolchain_rule = True,
    doc = "A command found on PATH, identified by the output of `tool version_args...`.",
)
