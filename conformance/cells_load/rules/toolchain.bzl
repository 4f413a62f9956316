def greeter_impl(ctx: AnalysisContext, info_type) -> list[Provider]:
    return [DefaultInfo(), info_type(greeting = ctx.attrs.greeting)]
