def _gen_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("gen/dep_out.txt")
    ctx.actions.write(out, "dep")
    return [DefaultInfo(default_output = out)]

gen = rule(
    impl = _gen_impl,
    attrs = {},
)

def _rendering(ctx: AnalysisContext, local: Artifact, flat: Artifact) -> list:
    src = ctx.attrs.src
    dep_out = ctx.attrs.dep[DefaultInfo].default_outputs[0]
    return [
        cmd_args("a", "b", format = "--flag={}"),
        cmd_args("a", "b", format = "<{}>", delimiter = ","),
        cmd_args("x", "y", "z", delimiter = ""),
        cmd_args("a", "b", prepend = "-I"),
        cmd_args("inner", cmd_args("deep", format = "[{}]"), format = "({})"),
        cmd_args("pre", cmd_args("j1", "j2", delimiter = "+")),
        cmd_args("plain", "two words", "it's", "$HOME", "a\"b", "semi;colon", "", src, quote = "shell"),
        cmd_args("shown", hidden = [src]),
        cmd_args("a-b-c", replace_regex = ("-", "_")),
        cmd_args(src),
        cmd_args(flat, parent = 1),
        cmd_args(src, relative_to = local),
        cmd_args(src, relative_to = (local, 1)),
        cmd_args(dep_out, relative_to = (local, 1)),
        cmd_args(src, ignore_artifacts = True),
        cmd_args(local),
    ]

def _paths_impl(ctx: AnalysisContext) -> list[Provider]:
    local = ctx.actions.declare_output("local/mine.txt")
    ctx.actions.write(local, "mine")
    flat = ctx.actions.declare_output("flat.txt")
    ctx.actions.write(flat, "flat")

    rendered = ctx.actions.declare_output("rendered.txt")
    ctx.actions.write(rendered, _rendering(ctx, local, flat), allow_args = True)

    run_argv = ctx.actions.declare_output("run_argv.txt")
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", "printf '%s\\n' \"$@\" > \"$0\"", run_argv.as_output(), _rendering(ctx, local, flat)),
        category = "argv",
    )

    tree = ctx.actions.declare_output("tree", dir = True)
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", "mkdir -p \"$0/sub\" && echo b > \"$0/sub/b.txt\"", tree.as_output()),
        category = "tree",
    )
    projected = tree.project("sub/b.txt")

    facts = ctx.actions.declare_output("artifact_facts.json")
    ctx.actions.write_json(facts, {
        "out_basename": local.basename,
        "out_extension": local.extension,
        "out_owner": str(local.owner),
        "out_short_path": local.short_path,
        "projected_basename": projected.basename,
        "projected_short_path": projected.short_path,
        "src_is_source": ctx.attrs.src.is_source,
        "src_owner": ctx.attrs.src.owner,
        "src_short_path": ctx.attrs.src.short_path,
    })
    return [DefaultInfo(default_outputs = [rendered, run_argv, facts])]

paths = rule(
    impl = _paths_impl,
    attrs = {
        "dep": attrs.dep(),
        "src": attrs.source(),
    },
)

def _root_paths_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("root_rendered.txt")
    ctx.actions.write(out, [
        cmd_args(ctx.attrs.src),
        cmd_args(ctx.attrs.src, parent = 1),
        cmd_args(ctx.attrs.src, absolute_prefix = "$ROOT/"),
    ], allow_args = True)
    return [DefaultInfo(default_output = out)]

root_paths = rule(
    impl = _root_paths_impl,
    attrs = {"src": attrs.source()},
)
