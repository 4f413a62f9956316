load("@root//rules:toolchain.bzl", "greeter_impl")

GreeterInfo = provider(fields = ["greeting"])

def _greeter_impl(ctx: AnalysisContext) -> list[Provider]:
    return greeter_impl(ctx, GreeterInfo)

greeter = rule(
    impl = _greeter_impl,
    attrs = {"greeting": attrs.string()},
    is_toolchain_rule = True,
)
