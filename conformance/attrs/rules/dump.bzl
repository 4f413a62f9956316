def _dump_impl(ctx: AnalysisContext) -> list[Provider]:
    a = ctx.attrs
    out = ctx.actions.declare_output("attrs.json")
    ctx.actions.write_json(out, {
        "dflt": a.dflt,
        "dict": a.dict,
        "enum": a.enum,
        "list": a.list,
        "one_int": a.one_int,
        "one_int_type": type(a.one_int),
        "one_str": a.one_str,
        "one_str_type": type(a.one_str),
        "opt": a.opt,
        "opt_type": type(a.opt),
        "sorted_dict": a.sorted_dict,
        "tuple": a.tuple,
        "tuple_type": type(a.tuple),
        "types": [type(True), type(1), type(""), type([]), type({}), type(()), type(None), type(struct())],
    })
    return [DefaultInfo(default_output = out)]

dump = rule(
    impl = _dump_impl,
    attrs = {
        "dflt": attrs.string(default = "the_default"),
        "dict": attrs.dict(attrs.string(), attrs.string()),
        "enum": attrs.enum(["fast", "slow"]),
        "list": attrs.list(attrs.string()),
        "one_int": attrs.one_of(attrs.int(), attrs.string()),
        "one_str": attrs.one_of(attrs.int(), attrs.string()),
        "opt": attrs.option(attrs.string()),
        "sorted_dict": attrs.dict(attrs.string(), attrs.string(), sorted = True),
        "tuple": attrs.tuple(attrs.string(), attrs.int()),
    },
)

def _label_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("label.json")
    label = ctx.label
    ctx.actions.write_json(out, {
        "cell": label.cell,
        "name": label.name,
        "package": label.package,
        "path": str(label.path),
        "raw_target": str(label.raw_target()),
        "str": str(label),
        "sub_target": label.sub_target,
    })
    return [DefaultInfo(default_output = out)]

label_facts = rule(
    impl = _label_impl,
    attrs = {},
)
