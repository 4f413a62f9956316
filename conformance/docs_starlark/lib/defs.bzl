"""module-summary-line.

module-details-paragraph.
"""

load(":shared.bzl", "LoadedInfo")

GreetingInfo = provider(
    doc = "greeting-provider-doc",
    fields = {
        "text": provider_field(str, default = "hello"),
    },
)

def _greeting_impl(ctx: AnalysisContext) -> list[Provider]:
    _ = LoadedInfo
    return [DefaultInfo(), GreetingInfo(text = ctx.attrs.text)]

greeting = rule(
    impl = _greeting_impl,
    attrs = {
        "count": attrs.int(default = 3, doc = "count-attr-doc"),
        "text": attrs.string(doc = "text-attr-doc"),
    },
    doc = "greeting-rule-doc",
)

def greet_twice(name, text = "hi", **kwargs):
    """greet-macro-summary.

    greet-macro-details.
    """
    greeting(name = name, text = text, **kwargs)

def _private_helper():
    """private-helper-doc"""
    pass
