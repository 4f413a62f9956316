"""The partitioner on ResNet-50's real FINN estimates, with the U280's default budgets.

Two claims, each checked against a reference of its own rather than the partitioner's output:

* One U280 at 80 % cannot hold the network: the refusal names a resource and the card, and
  that resource is one whose total over all layers (summed here from FINN's per-layer
  estimates) exceeds 80 % of the card's total (summed here from the board file,
  toolchains/fpga_platforms/, the source of the partitioner's own constants).
* Over CARDS U280s in a chain (the number this network needs: one fewer is refused) the plan
  uses every card and every cut carries exactly one stream: the edges between cards are
  counted from each layer's predecessors in the estimates, not from the plan's cut list.

The estimates come from the estimates fixture (estimates.json beside this file), which
`:estimates_fixture` compares with a fresh FINN build, so this test runs in seconds.

Run: ./forge test //finn/resnet50:partition_u280
"""

import json
import os
import subprocess
import tempfile
import tomllib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HERE = os.path.dirname(os.path.abspath(__file__))
RESOURCES = ("LUT", "BRAM_18K", "URAM", "DSP")
# The partitioner's default upper bound per resource (finn/README.md, "Partitioner").
MAX_UTIL = 0.8
# The chain this network needs (finn/resnet50/README.md says why).
CARDS = int(os.environ.get("RESNET50_CARDS", "3"))


def estimates():
    with open(os.path.join(HERE, "estimates.json")) as f:
        return json.load(f)


def u280_totals():
    path = os.environ.get("U280_PLATFORM")
    assert path, "U280_PLATFORM is not set: run ./forge test //finn/resnet50:partition_u280"
    with open(path if os.path.isabs(path) else os.path.join(ROOT, path), "rb") as f:
        slrs = tomllib.load(f)["slr"].values()
    return {r: sum(s[r] for s in slrs) for r in RESOURCES}


def partition(n, objective="balanced"):
    """Run finn-partition on n default U280s in a chain; (returncode, stderr, plan)."""
    binary = os.environ["FINN_PARTITION_BIN"].split()
    board = os.environ["U280_PLATFORM"]
    board = board if os.path.isabs(board) else os.path.join(ROOT, board)
    devices = {"devices": [{"name": f"fpga{i}", "platform": board, "clk_mhz": 250}
                           for i in range(n)]}
    with tempfile.TemporaryDirectory() as d:
        paths = {}
        for name, doc in (("devices", devices), ("topology", {"kind": "chain"})):
            paths[name] = os.path.join(d, name + ".json")
            with open(paths[name], "w") as f:
                json.dump(doc, f)
        out = os.path.join(d, "plan.json")
        r = subprocess.run(binary + ["--estimates", os.path.join(HERE, "estimates.json"),
                                     "--devices", paths["devices"], "--topology",
                                     paths["topology"], "--objective", objective, "--out", out],
                           cwd=ROOT, capture_output=True, text=True)
        plan = None
        if r.returncode == 0:
            with open(out) as f:
                plan = json.load(f)
    return r.returncode, r.stderr, plan


def test_one_u280_is_refused_naming_resource_and_card():
    est = estimates()
    total = u280_totals()
    need = {r: sum(layer["res"].get(r, 0.0) for layer in est["layers"]) for r in RESOURCES}
    over = [r for r in RESOURCES if need[r] > MAX_UTIL * total[r]]
    assert over, f"the network fits one U280 at 80 %: needs {need}, card {total}"
    code, err, _ = partition(1)
    assert code != 0, "one U280 was accepted"
    assert "infeasible" in err, err
    assert "fpga0" in err, f"the refusal does not name the card: {err}"
    named = [r for r in RESOURCES if r in err]
    assert named and set(named) <= set(over), (
        f"the refusal names {named}, but only {over} exceed 80 % of a U280: {err}")


def test_one_card_fewer_is_refused():
    code, err, _ = partition(CARDS - 1)
    assert code != 0 and "infeasible" in err, f"{CARDS - 1} cards were accepted"


def test_chain_cuts_carry_one_stream():
    est = estimates()
    code, err, plan = partition(CARDS)
    assert code == 0, err
    device = {p["name"]: p["device"] for p in plan["layers"]}
    assert set(device) == {layer["name"] for layer in est["layers"]}
    used = sorted(set(device.values()), key=lambda x: int(x[4:]))
    assert used == [f"fpga{i}" for i in range(CARDS)], f"the plan uses {used}"
    crossing = {}
    for layer in est["layers"]:
        for p in layer["preds"]:
            a, b = device[p], device[layer["name"]]
            if a != b:
                crossing.setdefault((a, b), []).append((p, layer["name"]))
    # a chain: card i feeds card i+1 only, over one edge of the graph each
    assert sorted(crossing) == [(f"fpga{i}", f"fpga{i + 1}") for i in range(CARDS - 1)], crossing
    for pair, edges in crossing.items():
        assert len(edges) == 1, f"{pair} is crossed by {len(edges)} streams: {edges}"
    assert sorted((c["from_layer"], c["to_layer"]) for c in plan["cuts"]) == sorted(
        e for edges in crossing.values() for e in edges)
    # every card within 80 % of the board file's totals, summed from FINN's estimates
    total = u280_totals()
    for card in used:
        for r in RESOURCES:
            load = sum(layer["res"].get(r, 0.0) for layer in est["layers"]
                       if device[layer["name"]] == card)
            assert load <= MAX_UTIL * total[r] + 1e-6, f"{card} {r}: {load} of {total[r]}"


def test_plan_figures_beside_finn_examples():
    """The chain's modelled FPS is FINN's own for this folding (its dataflow_performance, in
    the estimates' "network" entry: the cut adds no stage), printed beside the published
    ResNet-50 figures of paper/figures.toml."""
    est = estimates()
    _, err, plan = partition(CARDS)
    assert plan is not None, err
    finn_fps = est["network"]["estimated_throughput_fps"]
    assert abs(plan["fps"] - finn_fps) <= 1e-6 * finn_fps, (plan["fps"], finn_fps)
    path = os.environ.get("PAPER_FIGURES")
    assert path, "PAPER_FIGURES is not set: run ./forge test //finn/resnet50:partition_u280"
    with open(path if os.path.isabs(path) else os.path.join(ROOT, path), "rb") as f:
        pub = tomllib.load(f)["finn_examples_resnet50"]
    assert pub["board"] == "U250" and pub["fps"] > 0 and pub["latency_ms"] > 0
    print(f"\nResNet-50 over {CARDS} U280s (w4a4, FINN estimates, 250 MHz): "
          f"{plan['fps']:.0f} FPS, latency {plan['finn_no_overlap_latency_ms']:.2f} ms "
          f"(FINN's no-overlap sum); published: {pub['fps']:.0f} FPS, {pub['latency_ms']} ms "
          f"on one {pub['board']} ({pub['citation']})")
