def _outputs_impl(ctx: AnalysisContext) -> list[Provider]:
    kind = ctx.attrs.kind
    if kind == "file":
        out = ctx.actions.declare_output(ctx.attrs.file)
        ctx.actions.write(out, ctx.attrs.file)
        return [DefaultInfo(default_output = out)]
    if kind == "dir":
        tree = ctx.actions.declare_output("tree", dir = True)
        ctx.actions.run(
            cmd_args("/bin/sh", "-c", "mkdir -p \"$0\" && echo leaf > \"$0/leaf.txt\"", tree.as_output()),
            category = "make_tree",
        )
        return [DefaultInfo(default_output = tree)]
    if kind == "two":
        first = ctx.actions.declare_output("first.txt")
        ctx.actions.write(first, "first")
        second = ctx.actions.declare_output("second.txt")
        ctx.actions.write(second, "second")
        return [DefaultInfo(
            default_outputs = [first, second],
            sub_targets = {"first": [DefaultInfo(default_output = first)]},
        )]
    if kind == "other_only":
        hidden = ctx.actions.declare_output("hidden.txt")
        ctx.actions.write(hidden, "hidden")
        return [DefaultInfo(other_outputs = [hidden])]
    if kind == "fail":
        never = ctx.actions.declare_output("never.txt")
        ctx.actions.run(
            cmd_args("/bin/sh", "-c", "exit 1", never.as_output()),
            category = "fail_step",
        )
        return [DefaultInfo(default_output = never)]
    return [DefaultInfo()]

outputs = rule(
    impl = _outputs_impl,
    attrs = {
        "file": attrs.string(default = "out.txt"),
        "kind": attrs.enum(["file", "dir", "two", "none", "other_only", "fail"]),
    },
)
