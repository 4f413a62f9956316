"""finn/resnet50/estimates.json (the fixture of test_plan.py) is what the FINN front end
gives today: the estimates of a fresh build of the whole flow (RESNET50_ESTIMATES) compared
layer by layer, so the partitioner's tests cannot run on stale figures.

Run (the whole FINN flow, a long check): ./forge test -c finn.long_checks=true //finn/resnet50:estimates_fixture
Regenerate: ./forge build //finn/resnet50:estimates --out finn/resnet50/estimates.json
"""

import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
REGENERATE = "./forge build //finn/resnet50:estimates --out finn/resnet50/estimates.json"


def test_fixture_is_the_built_estimates():
    path = os.environ.get("RESNET50_ESTIMATES")
    assert path, "RESNET50_ESTIMATES is not set: run the test through ./forge"
    with open(path if os.path.isabs(path) else os.path.join(ROOT, path)) as f:
        fresh = json.load(f)
    with open(os.path.join(HERE, "estimates.json")) as f:
        kept = json.load(f)
    fresh_names = [layer["name"] for layer in fresh["layers"]]
    kept_names = [layer["name"] for layer in kept["layers"]]
    assert kept_names == fresh_names, f"the layers differ; regenerate: {REGENERATE}"
    for a, b in zip(kept["layers"], fresh["layers"]):
        assert a == b, f"layer {a['name']} differs; regenerate: {REGENERATE}"
    assert kept == fresh, f"the network figures differ; regenerate: {REGENERATE}"
