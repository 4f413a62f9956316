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


def built(var):
    path = os.environ.get(var)
    assert path, f"{var} is not set: run ./forge test //finn/resnet_tiny:cuts_carry_one_stream"
    return path if os.path.isabs(path) else os.path.join(ROOT, path)


def estimates():
    with open(built("RESNET_ESTIMATES")) as f:
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


def test_split_refuses_a_cut_between_two_branches():
    """A plan that cuts inside a residual block (its shortcut on the next card) is refused by
    the split with the devices and streams named, before any model is written."""
    import sys

    sys.path.insert(0, os.path.join(ROOT, "finn", "flow"))
    import finn_env
    import split_partitions

    finn_env.setup()
    from qonnx.core.modelwrapper import ModelWrapper

    model = ModelWrapper(built("RESNET_MODEL"))
    names = [n.name for n in model.graph.node]
    # the first residual Add and everything after it on fpga1: the block's main branch and
    # its shortcut (a DuplicateStreams output) both cross
    join = next(i for i, n in enumerate(model.graph.node) if n.op_type.startswith("ElementwiseAdd"))
    device_of = {n: ("fpga0" if i < join else "fpga1") for i, n in enumerate(names)}
    with pytest.raises(split_partitions.UserError, match=r"device fpga1 reads 2 stream\(s\)"):
        split_partitions.split(model, device_of)
