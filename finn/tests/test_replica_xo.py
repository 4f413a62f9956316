"""replica_xo.py, the `vitis` FINN kernels of a replica plan's device, with FINN's IP steps
stood in (they need vitis_hls and Vivado): on the tiny network's HW model and a plan with
two whole copies and one copy cut across two cards,

- each device gets one `.xo` per distinct kernel: `finn_whole` once for both whole copies,
  the cut copy's segments as `finn_<first>__<last>` on their own cards;
- the models reaching the IP steps carry the plan's folding and, behind a cut wider than
  the next layer takes, FINN's width converter at the cut's width down to the layer's input
  width as FINN's estimate of that layer gives it;
- the cut copy's two segments run one after another (FINN's Python execution) give the
  unpartitioned model's output bit for bit;
- a failing IP step leaves no output directory; a kernel fed two cut widths is refused.

Run: .venv/finn/bin/python -m pytest finn/tests/test_replica_xo.py
Environment: TINY_MODEL (the HW model, //finn/tiny:flow), TINY_ESTIMATES (its estimates).
"""

import json
import os
import pathlib
import sys
import tempfile

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "finn", "flow"))

import functional  # noqa: E402
import partition_xo  # noqa: E402
import replica_xo  # noqa: E402


@pytest.fixture
def tmp_path():
    with tempfile.TemporaryDirectory(prefix="finn_replica_xo_") as d:
        yield pathlib.Path(d)


def inputs():
    model = os.environ["TINY_MODEL"]
    with open(os.environ["TINY_ESTIMATES"]) as f:
        est = json.load(f)
    return model, est["layers"]


def plan_for(layers, cut_at, cut_bits):
    """Copies 0 and 2 whole on fpga0; copy 1 cut after layer `cut_at` to fpga1."""
    names = [la["name"] for la in layers]
    first, last = names[0], names[-1]
    a, b = names[: cut_at + 1], names[cut_at + 1:]
    whole = {"device": "fpga0", "first_layer": first, "last_layer": last, "layers": names}
    return {
        "layers": [{"name": n} for n in names],
        "replicas": [
            {"index": 0, "segments": [whole], "cuts": []},
            {"index": 1, "segments": [
                {"device": "fpga0", "first_layer": first, "last_layer": a[-1], "layers": a},
                {"device": "fpga1", "first_layer": b[0], "last_layer": last, "layers": b},
            ], "cuts": [{"from_layer": a[-1], "to_layer": b[0], "from_device": "fpga0",
                         "from_port": 1, "to_device": "fpga1", "to_port": 0,
                         "stream_bits": cut_bits}]},
            {"index": 2, "segments": [whole], "cuts": []},
        ],
    }


class StandIn:
    """FINN's IP steps replaced: keeps each kernel's model and writes a marker .xo."""

    def __init__(self, scratch, fail=False):
        self.models, self.scratch, self.fail = {}, scratch, fail

    def __call__(self, model, kernel, part, clk_mhz):
        if self.fail:
            return None
        self.models[kernel] = model
        xo = os.path.join(tempfile.mkdtemp(prefix="standin_xo_", dir=self.scratch), kernel + ".xo")
        pathlib.Path(xo).write_text(f"{kernel} {part} {clk_mhz}\n")
        return xo


def setup(tmp_path, monkeypatch, fail=False):
    model, layers = inputs()
    # A cut in the middle, whose consumer is an MVAU-like layer with a stream to widen.
    cut_at = len(layers) // 2
    consumer = layers[cut_at + 1]
    cut_bits = 2 * consumer["in_stream_bits"]
    # The folding: every layer as exported, but the first with a PE before the cut at PE=1
    # (1 divides every channel count), which the model reaching the IP steps must show.
    folded = next(la["name"] for la in layers[: cut_at + 1] if "PE" in la["attrs"])
    folding = tmp_path / "fpga0.json"
    folding.write_text(json.dumps({"Defaults": {}, folded: {"PE": 1}}))
    plan = plan_for(layers, cut_at, cut_bits)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    stand_in = StandIn(scratch, fail)
    monkeypatch.setattr(partition_xo, "ip_steps", stand_in)
    return model, layers, plan, folding, stand_in, cut_at, cut_bits


def test_one_xo_per_kernel_with_folding_and_converter(tmp_path, monkeypatch):
    model, layers, plan, folding, stand_in, cut_at, cut_bits = setup(tmp_path, monkeypatch)
    names = [la["name"] for la in layers]
    out0, out1 = tmp_path / "xo0", tmp_path / "xo1"
    replica_xo.build(model, str(folding), plan, "fpga0", "xcu280-fsvh2892-2L-e", 250.0, str(out0))
    replica_xo.build(model, str(folding), plan, "fpga1", "xcu280-fsvh2892-2L-e", 250.0, str(out1))
    seg_a = f"finn_{names[0]}__{names[cut_at]}"
    seg_b = f"finn_{names[cut_at + 1]}__{names[-1]}"
    assert sorted(os.listdir(out0)) == sorted(["finn_whole.xo", seg_a + ".xo"])
    assert sorted(os.listdir(out1)) == [seg_b + ".xo"]
    assert (out0 / "finn_whole.xo").read_text() == "finn_whole xcu280-fsvh2892-2L-e 250.0\n"

    from qonnx.custom_op.registry import getCustomOp

    folded = json.loads(folding.read_text()).keys() - {"Defaults"}
    for kernel in ("finn_whole", seg_a):
        m = stand_in.models[kernel]
        assert m.graph.node[0].name == names[0]
        (node,) = [n for n in m.graph.node if n.name in folded]
        assert getCustomOp(node).get_nodeattr("PE") == 1, kernel
    # Behind the cut: FINN's converter from the cut's width to the layer's own input width
    # (FINN's estimate, export_estimates.py), then the segment's layers.
    b = stand_in.models[seg_b]
    dwc = getCustomOp(b.graph.node[0])
    assert b.graph.node[0].op_type == "StreamingDataWidthConverter"
    assert (dwc.get_nodeattr("inWidth"), dwc.get_nodeattr("outWidth")) == (
        cut_bits, layers[cut_at + 1]["in_stream_bits"])
    assert [n.name for n in b.graph.node[1:]] == names[cut_at + 1:]

    # The cut copy's segments, one after another, compute the unpartitioned model.
    from qonnx.core.modelwrapper import ModelWrapper

    whole = ModelWrapper(model)
    rng = np.random.default_rng(0)
    (inp,) = whole.graph.input
    dt = whole.get_tensor_datatype(inp.name)
    x = rng.integers(dt.min(), dt.max() + 1, size=whole.get_tensor_shape(inp.name)).astype(
        np.float32)
    want = functional.execute(whole, {inp.name: x})
    a = stand_in.models[seg_a]
    got_a = functional.execute(a, {a.graph.input[0].name: x})
    (mid,) = got_a.values()
    got = functional.execute(b, {b.graph.input[0].name: mid})
    assert list(got.values())[0].tobytes() == list(want.values())[0].tobytes()


def test_a_failing_ip_step_leaves_no_directory(tmp_path, monkeypatch):
    model, _, plan, folding, _, _, _ = setup(tmp_path, monkeypatch, fail=True)
    out = tmp_path / "xo0"
    with pytest.raises(replica_xo.UserError, match="no .xo"):
        replica_xo.build(model, str(folding), plan, "fpga0", "p", 250.0, str(out))
    assert not out.exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fpga0.json", "scratch"]


def test_a_kernel_fed_two_cut_widths_is_refused(tmp_path, monkeypatch):
    model, layers, plan, folding, _, cut_at, cut_bits = setup(tmp_path, monkeypatch)
    # a fourth copy with the same segment on fpga1, fed at another width
    other = json.loads(json.dumps(plan["replicas"][1]))
    other["index"] = 3
    other["cuts"][0]["stream_bits"] = cut_bits * 2
    plan["replicas"].append(other)
    with pytest.raises(replica_xo.UserError, match="one kernel has one input width"):
        replica_xo.kernels(plan, "fpga1")
    with pytest.raises(replica_xo.UserError, match="puts no copy on fpga9"):
        replica_xo.kernels(plan, "fpga9")
