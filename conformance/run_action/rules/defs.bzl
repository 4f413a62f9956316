def _probe_impl(ctx: AnalysisContext) -> list[Provider]:
    report = ctx.actions.declare_output("report/env.txt")
    tree = ctx.actions.declare_output("tree", dir = True)
    ctx.actions.run(
        cmd_args(
            "/bin/sh",
            ctx.attrs.script,
            report.as_output(),
            tree.as_output(),
            "two words",
            ctx.attrs.src,
        ),
        env = {
            "IN": ctx.attrs.src,
            "PLAIN": "two words",
        },
        category = "probe",
    )
    ident = ctx.actions.declare_output("ident/scratch.txt")
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", "echo \"$BUCK_SCRATCH_PATH\" > \"$0\"", ident.as_output()),
        category = "with_id",
        identifier = "the_identifier",
    )
    return [DefaultInfo(
        default_output = report,
        sub_targets = {
            "ident": [DefaultInfo(default_output = ident)],
            "tree": [DefaultInfo(default_output = tree)],
        },
    )]

probe = rule(
    impl = _probe_impl,
    attrs = {
        "script": attrs.source(),
        "src": attrs.source(),
    },
)
