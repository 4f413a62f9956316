NeededInfo = provider(fields = ["value"])

def _greet_impl(ctx: AnalysisContext) -> list[Provider]:
    main = ctx.actions.declare_output("greet.txt")
    ctx.actions.write(main, "greeting")
    index = ctx.actions.declare_output("docs/index.html")
    ctx.actions.write(index, "<p>index</p>")
    return [
        DefaultInfo(
            default_output = main,
            sub_targets = {
                "docs": [DefaultInfo(
                    default_outputs = [],
                    sub_targets = {
                        "index": [DefaultInfo(default_output = index)],
                    },
                )],
            },
        ),
        NeededInfo(value = "needed-value"),
    ]

greet = rule(
    impl = _greet_impl,
    attrs = {},
)

def _use_impl(ctx: AnalysisContext) -> list[Provider]:
    dep = ctx.attrs.dep
    out = ctx.actions.declare_output("use.txt")
    ctx.actions.write(out, [
        dep[NeededInfo].value,
        "has DefaultInfo: " + str(dep.get(DefaultInfo) != None),
        "source from target: " + ctx.attrs.src.short_path,
        "label: " + str(dep.label.raw_target()),
    ])
    return [DefaultInfo(default_output = out)]

use = rule(
    impl = _use_impl,
    attrs = {
        "dep": attrs.dep(providers = [NeededInfo]),
        "src": attrs.source(),
    },
)

# A rule bound to a private name and called only through a macro: buck2 accepts it.
_greet_inner = rule(
    impl = _greet_impl,
    attrs = {},
)

def greet_macro(name, **kwargs):
    _greet_inner(name = name, **kwargs)
