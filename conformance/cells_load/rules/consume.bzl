# Loads the same module through two spellings: the provider must be one and the same.
load("@root//rules:defs.bzl", SameInfo = "MessageInfo")
load("@toolchains//:greeting.bzl", "GreeterInfo")
load("//rules:defs.bzl", "MessageInfo")

def _consume_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("joined.txt")
    parts = [
        ctx.attrs.msg[SameInfo].text,
        ctx.attrs.msg[MessageInfo].text,
        ctx.attrs._greeter[GreeterInfo].greeting,
        ctx.attrs.extra_msg[MessageInfo].text,
    ]
    ctx.actions.write(out, parts)
    return [DefaultInfo(default_output = out)]

consume = rule(
    impl = _consume_impl,
    attrs = {
        "extra_msg": attrs.dep(providers = [MessageInfo]),
        "msg": attrs.dep(providers = [SameInfo]),
        "_greeter": attrs.default_only(attrs.toolchain_dep(default = "toolchains//:greeter", providers = [GreeterInfo])),
    },
)
