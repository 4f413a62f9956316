def _where_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("where.txt")
    ctx.actions.run(
        cmd_args(
            "/bin/sh",
            "-c",
            "{ echo \"getcwd=$(pwd -P)\"; echo \"PWD=$PWD\"; test -f pkg/BUCK && echo \"pkg/BUCK: visible\"; } > \"$1\"",
            "--",
            out.as_output(),
            hidden = ctx.attrs.srcs,
        ),
        category = "where",
    )
    return [DefaultInfo(default_output = out)]

where = rule(
    impl = _where_impl,
    attrs = {"srcs": attrs.list(attrs.source(), default = [])},
)
