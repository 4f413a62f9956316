def _use_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("use.txt")
    ctx.actions.write(out, "used")
    return [DefaultInfo(default_output = out)]

use = rule(
    impl = _use_impl,
    attrs = {"deps": attrs.list(attrs.dep(), default = [])},
)
