# Public symbols of this file are globals in every BUCK file and root-cell .bzl file.

PUBLIC_TEXT = "from prelude"

_private_text = "never exported"

def where_am_i() -> str:
    return package_name() + "|" + get_cell_name()

def _note_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("note.txt")
    ctx.actions.write(out, ctx.attrs.text)
    return [DefaultInfo(default_output = out)]

note = rule(
    impl = _note_impl,
    attrs = {"text": attrs.string()},
)
