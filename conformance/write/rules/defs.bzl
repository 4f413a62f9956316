def _json_value(ctx: AnalysisContext):
    return {
        "z": 1,
        "a": [1, 2],
        "struct": struct(k = "v", n = None),
        "tuple": (1, "x"),
        "none": None,
        "unicode": "héllo/ü",
        "bool": True,
        "path": ctx.attrs.src,
        "cmd": cmd_args("tool", ctx.attrs.src),
        "empty_list": [],
        "empty_dict": {},
    }

def _writes_impl(ctx: AnalysisContext) -> list[Provider]:
    verbatim = ctx.actions.declare_output("verbatim.txt")
    ctx.actions.write(verbatim, "line one\nline two\n")
    lines = ctx.actions.declare_output("lines.txt")
    ctx.actions.write(lines, ["l1", "l2", "l3"])
    args = ctx.actions.declare_output("args.txt")
    result = ctx.actions.write(args, cmd_args("a", "b"), allow_args = True)
    exe = ctx.actions.declare_output("exe.sh")
    ctx.actions.write(exe, "#!/bin/sh\necho hi\n", is_executable = True)

    compact = ctx.actions.declare_output("compact.json")
    ctx.actions.write_json(compact, _json_value(ctx))
    pretty = ctx.actions.declare_output("pretty.json")
    ctx.actions.write_json(pretty, _json_value(ctx), pretty = True)
    encoded = ctx.actions.declare_output("encoded.json")
    ctx.actions.write(encoded, json.encode({"z": 1, "a": [1, 2], "none": None, "unicode": "héllo/ü"}))
    plain = ctx.actions.declare_output("plain.json")
    ctx.actions.write_json(plain, {"z": 1, "a": [1, 2], "none": None, "unicode": "héllo/ü"})

    facts = ctx.actions.declare_output("facts.txt")
    ctx.actions.write(facts, [
        "allow_args returns: " + type(result),
        "tuple length: " + str(len(result)),
    ])
    return [DefaultInfo(default_outputs = [verbatim, lines, args, exe, compact, pretty, encoded, plain, facts])]

writes = rule(
    impl = _writes_impl,
    attrs = {"src": attrs.source()},
)
