"""The partitioner on a network with branches: over N cards in a chain, every cut carries
one stream.

The reference is the graph itself (each layer's predecessors in the estimates FINN's
export gives, RESNET_ESTIMATES), not the plan: for every N the plan's placement must
leave exactly one edge of that graph between consecutive cards, so no residual block is
split between its two branches. Generous budgets leave the choice of cuts free (each card
the network fits on one card), and the balanced objective spreads it over all N.

Run: ./forge test //finn/resnet_tiny:cuts_carry_one_stream
"""

import json
import os
import subprocess
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESOURCES = ("LUT", "BRAM_18K", "DSP")


def estimates():
    path = os.environ.get("RESNET_ESTIMATES")
    assert path, "RESNET_ESTIMATES is not set: run ./forge test //finn/resnet_tiny:cuts_carry_one_stream"
    with open(os.path.join(ROOT, path) if not os.path.isabs(path) else path) as f:
        return json.load(f)


def devices(est, n):
    """N cards, each of which could hold the whole network: the balanced objective (the
    lowest maximum utilisation) still spreads it over all of them."""
    need = {r: sum(layer["res"].get(r, 0) for layer in est["layers"]) for r in RESOURCES}
    total = {r: need[r] / 0.8 for r in RESOURCES}
    total.update({"FF": 1e6, "URAM": 10})
    return {"devices": [{"name": f"fpga{i}", "total": total, "clk_mhz": 250, "ports": 2,
                         "reserve_link_kernels": False} for i in range(n)]}


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_every_cut_carries_one_stream(n):
    est = estimates()
    binary = os.environ["FINN_PARTITION_BIN"].split()
    with tempfile.TemporaryDirectory() as d:
        paths = {}
        for name, doc in (("devices", devices(est, n)), ("topology", {"kind": "chain"})):
            paths[name] = os.path.join(d, name + ".json")
            with open(paths[name], "w") as f:
                json.dump(doc, f)
        est_path = os.path.join(d, "estimates.json")
        with open(est_path, "w") as f:
            json.dump(est, f)
        out = os.path.join(d, "plan.json")
        r = subprocess.run(binary + ["--estimates", est_path, "--devices", paths["devices"],
                                     "--topology", paths["topology"], "--objective", "balanced",
                                     "--out", out], cwd=ROOT, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        with open(out) as f:
            plan = json.load(f)
    device = {p["name"]: p["device"] for p in plan["layers"]}
    assert set(device) == {layer["name"] for layer in est["layers"]}
    used = sorted(set(device.values()), key=lambda x: int(x[4:]))
    assert len(used) == n, f"the plan uses {used} of {n} cards"
    crossing = {}
    for layer in est["layers"]:
        for p in layer["preds"]:
            a, b = device[p], device[layer["name"]]
            if a != b:
                crossing.setdefault((a, b), []).append((p, layer["name"]))
    # a chain: card i feeds card i+1 only, over one edge of the graph each
    assert sorted(crossing) == [(f"fpga{i}", f"fpga{i + 1}") for i in range(n - 1)], crossing
    for pair, edges in crossing.items():
        assert len(edges) == 1, f"{pair} is crossed by {len(edges)} streams: {edges}"
    # the plan's own cut list says the same
    assert sorted((c["from_layer"], c["to_layer"]) for c in plan["cuts"]) == sorted(
        e for edges in crossing.values() for e in edges)
