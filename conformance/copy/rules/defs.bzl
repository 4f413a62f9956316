def _copies_impl(ctx: AnalysisContext) -> list[Provider]:
    generated = ctx.actions.declare_output("generated.txt")
    ctx.actions.write(generated, "generated")

    tool_copy = ctx.actions.copy_file("copies/tool.sh", ctx.attrs.tool)
    plain_copy = ctx.actions.copy_file("copies/plain.txt", ctx.attrs.plain)
    gen_copy = ctx.actions.declare_output("copies/generated.txt")
    ctx.actions.copy_file(gen_copy, generated)

    srcs = {
        "a.txt": ctx.attrs.plain,
        "sub/gen.txt": generated,
    }
    linked = ctx.actions.symlinked_dir("linked", srcs)
    copied = ctx.actions.copied_dir("copied", srcs)
    return [DefaultInfo(
        default_outputs = [tool_copy, plain_copy, gen_copy],
        sub_targets = {
            "copied": [DefaultInfo(default_output = copied)],
            "linked": [DefaultInfo(default_output = linked)],
        },
    )]

copies = rule(
    impl = _copies_impl,
    attrs = {
        "plain": attrs.source(),
        "tool": attrs.source(),
    },
)
