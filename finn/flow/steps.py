"""The step lists of finn/flow/steps.bzl, for the Python flow scripts.

The lists the scripts need are literal assignments in the .bzl file, so they are read with `ast.literal_eval`
rather than restated here (one source for BUCK files, rules and scripts).
"""

import ast
import os

_BZL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "steps.bzl")


def _load():
    with open(_BZL, encoding="utf-8") as f:
        tree = ast.parse(f.read(), _BZL)
    values = {}
    for node in tree.body:
        # Only the literal assignments: a list derived from another (a comprehension)
        # is Starlark the scripts do not need.
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            try:
                values[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return values


_VALUES = _load()
FRONT_END_STEPS = _VALUES["FRONT_END_STEPS"]
AMD_ONLY_STEPS = _VALUES["AMD_ONLY_STEPS"]


def finn_step_names(entries):
    """FINN's step names of `name=step` entries (the part after `=`)."""
    return [e.split("=", 1)[-1] for e in entries]
