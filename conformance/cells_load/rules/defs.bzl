MessageInfo = provider(fields = ["text"])

def _message_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("message.txt")
    ctx.actions.write(out, ctx.attrs.text)
    return [DefaultInfo(default_output = out), MessageInfo(text = ctx.attrs.text)]

message = rule(
    impl = _message_impl,
    attrs = {"text": attrs.string()},
)
