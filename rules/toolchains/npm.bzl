# A command shipped inside an npm package that `./forge` installs into the project-local
# `.node/node_modules` from tools/bootstrap/npm/package-lock.json (pinned versions; npm ci).
# The command is a project-relative path; `.node` is in `[forge] sandbox_passthrough` so the
# version probe sees it inside forge's sandbox, as the project root does under buck2.

load(":system.bzl", "SystemToolInfo", "probe_tool_version")

def _npm_tool_toolchain_impl(ctx: AnalysisContext) -> list[Provider]:
    tool = "{}/node_modules/{}/{}".format(ctx.attrs.prefix, ctx.attrs.package, ctx.attrs.bin)
    version = probe_tool_version(ctx, ctx.attrs._probe, [[tool] + ctx.attrs.version_args])
    return [
        DefaultInfo(default_output = version),
        SystemToolInfo(tool = tool, version = version),
    ]

npm_tool_toolchain = rule(
    impl = _npm_tool_toolchain_impl,
    attrs = {
        # The executable inside the package (a native binary, so nothing needs node at run time).
        "bin": attrs.string(),
        "package": attrs.string(),
        "prefix": attrs.string(default = ".node"),
        "version_args": attrs.list(attrs.string(), default = ["--version"]),
        "_probe": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//rules/tools/action:action",
        )),
    },
    is_toolchain_rule = True,
    doc = "Executable `bin` of npm package `package` under `<prefix>/node_modules` " +
          "(tools/bootstrap/npm); `SystemToolInfo.tool` is its project-relative path.",
)
