"""Long checks: tests too long for the suite and for CI's soak run, declared only under
`-c finn.long_checks=true` and run by hand before a change to the FINN flow."""

def long_check(rule, **kwargs):
    """Declares the test `rule(**kwargs)` under `-c finn.long_checks=true` only."""
    value = read_config("finn", "long_checks", "false")
    if value not in ("true", "false"):
        fail("[finn] long_checks = {}: expected true or false".format(value))
    if value == "true":
        rule(**kwargs)
