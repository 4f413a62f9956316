"""End-to-end checks of the FINN flow steps, the partitioner and the partition split.

The reference is FINN's own Python execution of the unpartitioned HW model and
FINN's own estimate report; the partitioner's figures and the per-device partition
models are checked against them.

Run: .venv/finn/bin/python -m pytest finn/tests
Environment: FINN_PARTITION_BIN = the finn-partition binary (default: cargo run);
U280_PLATFORM / U55C_PLATFORM = the boards' platform files (default: toolchains/fpga_platforms),
whose `part` FINN is given.
"""

import json
import os
import pathlib
import subprocess
import sys
import tempfile
import tomllib

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "finn", "flow"))
sys.path.insert(0, os.path.join(ROOT, "finn", "models"))

import export_estimates  # noqa: E402
import functional  # noqa: E402
import gen_model  # noqa: E402
import run_step  # noqa: E402
import split_partitions  # noqa: E402
import steps  # noqa: E402

STEPS = steps.finn_step_names(steps.FRONT_END_STEPS)


def board_part(env, name):
    """The `part` of a board's platform file (the one source the rules pass FINN too)."""
    default = os.path.join(ROOT, "toolchains", "fpga_platforms", name + ".toml")
    with open(os.environ.get(env, default), "rb") as f:
        return tomllib.load(f)["part"]


U280_PART = board_part("U280_PLATFORM", "xilinx_u280_gen3x16_xdma_1_202211_1")
U55C_PART = board_part("U55C_PLATFORM", "xilinx_u55c_gen3x16_xdma_3_202210_1")

SMALL_DEVICES = {"devices": [
    {"name": f"fpga{i}", "clk_mhz": clk, "ports": 2, "reserve_link_kernels": False,
     "total": {"LUT": 6000, "FF": 1e6, "BRAM_18K": 24, "URAM": 10, "DSP": 80}}
    for i, clk in enumerate([250, 240, 230])
]}


def partitioner(args):
    binary = os.environ.get("FINN_PARTITION_BIN")
    cmd = [binary] if binary else [
        "cargo", "run", "--quiet", "-p", "finn_partitioner", "--bin", "finn-partition", "--"]
    return subprocess.run(cmd + args, cwd=ROOT, capture_output=True, text=True)


def step(name, inp, out, *extra, part=U280_PART):
    rc = run_step.main(["--step", name, "--in", str(inp), "--out", str(out),
                        "--fpga-part", part, *extra])
    assert rc == 0, f"step {name} failed"
    return out


# pytest's own tmp_path keeps the last runs' directories in TMPDIR (pytest-of-USER); these
# two are removed when the test ends, passed or failed.
@pytest.fixture
def tmp_path():
    with tempfile.TemporaryDirectory(prefix="finn_test_") as d:
        yield pathlib.Path(d)


@pytest.fixture(scope="module")
def flow():
    with tempfile.TemporaryDirectory(prefix="finn_flow_") as tmp:
        yield build_flow(pathlib.Path(tmp))


def build_flow(d):
    model = d / "model.onnx"
    gen_model.main(["--net", "tiny", "--out", str(model)])
    prev = model
    for s in STEPS:
        prev = step(s, prev, d / f"{s}.onnx", "--target-fps", "100000")
    est = d / "estimates.json"
    export_estimates.main(["--in", str(prev), "--out", str(est), "--fpga-part", U280_PART])
    return d, prev, est


def run_partitioner(d, est, objective):
    (d / "devices.json").write_text(json.dumps(SMALL_DEVICES))
    (d / "chain.json").write_text(json.dumps({"kind": "chain"}))
    plan = d / f"plan_{objective}.json"
    folds = d / f"folding_{objective}"
    r = partitioner(["--estimates", str(est), "--devices", str(d / "devices.json"),
                     "--topology", str(d / "chain.json"), "--objective", objective,
                     "--out", str(plan), "--folding-dir", str(folds)])
    assert r.returncode == 0, r.stderr
    return json.loads(plan.read_text()), folds


def merged_folding(folds, path):
    cfg = {"Defaults": {}}
    for f in sorted(folds.iterdir()):
        cfg.update({k: v for k, v in json.loads(f.read_text()).items() if k != "Defaults"})
    path.write_text(json.dumps(cfg))
    return path


def assert_bit_identical(whole, parts, n_inputs=4):
    from qonnx.core.modelwrapper import ModelWrapper

    whole = ModelWrapper(str(whole))
    parts = [ModelWrapper(str(p)) for p in parts]
    iname = whole.graph.input[0].name
    rng = np.random.default_rng(7)
    for _ in range(n_inputs):
        x = rng.integers(0, 256, size=whole.get_tensor_shape(iname)).astype(np.float32)
        from finn.core.onnx_exec import execute_onnx

        ref = execute_onnx(functional.despecialize(whole), {iname: x}, return_full_exec_context=True)
        got = functional.execute_chain(parts, {iname: x})
        # Every tensor that crosses a cut, and the final output, must match exactly.
        checked = 0
        for name, val in got.items():
            if name in ref and name != iname:
                assert np.array_equal(ref[name], val), f"tensor {name} differs"
                checked += 1
        assert checked >= len(parts)


@pytest.mark.parametrize("objective", ["balanced", "throughput"])
def test_partitions_execute_bit_identical(flow, objective):
    d, model, est = flow
    plan, folds = run_partitioner(d, est, objective)
    used = [x for x in plan["devices"] if x["layers"]]
    assert len(used) >= 2, "the budgets must force a split"
    assert len(plan["cuts"]) == len(used) - 1
    folded = step("apply_folding_config", model, d / f"folded_{objective}.onnx",
                  "--folding", str(merged_folding(folds, d / f"fold_{objective}.json")))
    out = d / f"parts_{objective}"
    assert split_partitions.main(["--in", str(folded), "--plan", str(d / f"plan_{objective}.json"),
                                  "--out-dir", str(out)]) == 0
    manifest = json.loads((out / "partitions.json").read_text())["partitions"]
    assert [p["device"] for p in manifest] == [x["name"] for x in used]
    assert_bit_identical(folded, [out / p["model"] for p in manifest])


def test_chosen_folding_matches_finn_estimate_report(flow):
    """The throughput plan's per-layer cycles and resources equal FINN's own
    estimates once FINN is run with the plan's folding."""
    d, model, est = flow
    plan, folds = run_partitioner(d, est, "throughput")
    folded = step("apply_folding_config", model, d / "folded_check.onnx",
                  "--folding", str(merged_folding(folds, d / "fold_check.json")))
    rep = d / "check_est.json"
    export_estimates.main(["--in", str(folded), "--out", str(rep), "--fpga-part", U280_PART])
    finn = {layer["name"]: layer for layer in json.loads(rep.read_text())["layers"]}
    changed = 0
    for layer in plan["layers"]:
        ref = finn[layer["name"]]
        for attr, val in layer["folding"].items():
            assert ref["attrs"][attr] == val, (layer["name"], attr)
        assert layer["cycles"] == ref["cycles"], layer["name"]
        if layer["res_from"] != "finn_report_fixed":
            assert layer["res"] == ref["res"], layer["name"]
        changed += layer["res_from"] == "formula"
    assert changed > 0, "the throughput objective changed no folding"


def test_estimates_are_the_same_for_the_u280_and_u55c_parts(flow, tmp_path):
    """The U280 and U55C deployments share one set of FINN estimates: the steps that take the
    part (specialize_layers onwards) and FINN's estimate export, run again for the XCU55C
    part from the U55C's platform file, give every layer the cycles and resources they give
    for the XCU280 (both UltraScale+ fabric: the same DSP48E2 and memory primitives)."""
    d, _, est = flow
    assert U280_PART != U55C_PART
    start = STEPS.index("specialize_layers")
    prev = d / f"{STEPS[start - 1]}.onnx"
    for s in STEPS[start:]:
        prev = step(s, prev, tmp_path / f"{s}.onnx", "--target-fps", "100000", part=U55C_PART)
    u55c = tmp_path / "estimates_u55c.json"
    export_estimates.main(["--in", str(prev), "--out", str(u55c), "--fpga-part", U55C_PART])
    a, b = json.loads(est.read_text()), json.loads(u55c.read_text())
    assert (a["fpga_part"], b["fpga_part"]) == (U280_PART, U55C_PART)
    assert [x["name"] for x in a["layers"]] == [x["name"] for x in b["layers"]]
    for x, y in zip(a["layers"], b["layers"]):
        assert (x["cycles"], x["res"], x["attrs"]) == (y["cycles"], y["res"], y["attrs"]), x["name"]
    assert a["network"] == b["network"]


# ---------------------------------------------------------------------------
# Bad input: a clear error naming the file and the cause, exit 3, no output left.

def run_cli(script, *args):
    return subprocess.run([sys.executable, os.path.join(ROOT, "finn", "flow", script), *args,
                           "--fpga-part", U280_PART],
                          capture_output=True, text=True)


def test_unknown_step_is_a_user_error(flow, tmp_path):
    _, model, _ = flow
    out = tmp_path / "o.onnx"
    r = run_cli("run_step.py", "--step", "no_such_step", "--in", str(model), "--out", str(out))
    assert r.returncode == 3
    assert "unknown FINN step 'no_such_step'" in r.stderr
    assert not out.exists()


def test_malformed_onnx_names_the_file(tmp_path):
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"this is not protobuf")
    out = tmp_path / "o.onnx"
    r = run_cli("run_step.py", "--step", "tidy_up", "--in", str(bad), "--out", str(out))
    assert r.returncode == 3
    assert str(bad) in r.stderr and "not a valid ONNX model" in r.stderr
    assert not out.exists()


def test_folding_naming_a_missing_layer(flow, tmp_path):
    _, model, _ = flow
    cfg = tmp_path / "fold.json"
    cfg.write_text(json.dumps({"Defaults": {}, "MVAU_rtl_99": {"PE": 2}}))
    out = tmp_path / "o.onnx"
    r = run_cli("run_step.py", "--step", "apply_folding_config", "--in", str(model),
                "--out", str(out), "--folding", str(cfg))
    assert r.returncode == 3
    assert str(cfg) in r.stderr and "MVAU_rtl_99" in r.stderr
    assert not out.exists()


def test_step_needing_amd_tools_says_so(flow, tmp_path):
    _, model, _ = flow
    r = run_cli("run_step.py", "--step", "hw_ipgen", "--in", str(model), "--out", str(tmp_path / "o"))
    assert r.returncode == 3 and "vitis_hls" in r.stderr
