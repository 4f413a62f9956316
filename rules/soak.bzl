"""Soak variants: the long runs of checks that the suite also makes in a shorter form.

`./forge test //...` leaves them out, so the suite stays within its time budget on two
cores; they exist only under `-c test.soak=true`, labelled `soak`, and CI runs them after
the suite with `./forge test -c test.soak=true //... --include soak` (buck2's label filter:
only the soak tests are built and run).
"""

SOAK_LABEL = "soak"

def soak_enabled() -> bool:
    """Whether this invocation defines the soak variants (`-c test.soak=true`)."""
    value = read_config("test", "soak", "false")
    if value not in ("true", "false"):
        fail("[test] soak = {}: expected true or false".format(value))
    return value == "true"

def soak_test(rule, **kwargs):
    """Declares the test `rule(**kwargs)` labelled `soak`, under `-c test.soak=true` only."""
    if soak_enabled():
        rule(labels = kwargs.pop("labels", []) + [SOAK_LABEL], **kwargs)
