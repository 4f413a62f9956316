#!/usr/bin/env python3
"""Reference outputs of FINN's own Python execution for the executor's bit-exactness test.

    exec_reference.py --model whole.onnx [--partitions DIR] --frames N --seed S --out REF
                      [--cases partitions,chain,whole]

(--partitions for the cases partitions and chain; the case whole alone executes only the
unpartitioned model, so deployments of one network can share its reference.)

Cases (each frame executed on its own, batch 1, as FINN's HW ops expect):
- partitions: every partition model on random inputs spanning its input datatypes;
- chain: random network inputs through the partitions one after another
  (finn/flow/functional.py `execute_chain`), every cut tensor recorded;
- whole: the same inputs through the unpartitioned model, and the case "chain = whole"
  that compares the executor's chain against FINN's unpartitioned output.
REF gets reference.json and one float32 .npy per case and tensor, frames stacked on
axis 0. FINN's execution time per case goes to stderr (the action's log), not into REF:
the reference is a cached output, and a wall-clock time would make it differ on every run.
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import finn_env  # noqa: E402

FORMAT = "auroraforge-finn-exec-reference/1"
CASES = ("partitions", "chain", "whole")


class UserError(Exception):
    pass


def _random(rng, model, name, frames):
    """`frames` random frames of tensor `name` spanning its FINN datatype."""
    import numpy as np

    shape = list(model.get_tensor_shape(name))
    if not shape or shape[0] != 1:
        raise UserError(f"input {name} has shape {shape}; FINN's HW ops run batch 1")
    shape = [frames] + shape[1:]
    dt = model.get_tensor_datatype(name)
    if not dt.is_integer():
        raise UserError(f"input {name} has non-integer datatype {dt.name}")
    lo, hi = int(dt.min()), int(dt.max())
    if dt.name == "BIPOLAR":
        vals = rng.integers(0, 2, size=shape) * 2 - 1
    else:
        vals = rng.integers(lo, hi + 1, size=shape)
    return vals.astype(np.float32)


def _stack(frames_list):
    import numpy as np

    return np.concatenate([np.asarray(f, dtype=np.float32) for f in frames_list], axis=0)


class Writer:
    def __init__(self, out):
        self.out = out
        self.n = 0

    def save(self, arr):
        import numpy as np

        self.n += 1
        name = f"t{self.n}.npy"
        np.save(os.path.join(self.out, name), np.asarray(arr, dtype=np.float32))
        return name


def build(model_path, parts_dir, frames, seed, cases, out):
    import numpy as np
    from qonnx.core.modelwrapper import ModelWrapper

    import functional

    parts = []
    if "partitions" in cases or "chain" in cases:
        with open(os.path.join(parts_dir, "partitions.json")) as f:
            manifest = json.load(f)["partitions"]
        parts = [(p["device"], ModelWrapper(os.path.join(parts_dir, p["model"])))
                 for p in manifest]
    whole = ModelWrapper(model_path)
    rng = np.random.default_rng(seed)
    w = Writer(out)
    result = []

    def timed(name, secs):
        print(f"exec_reference: {name}: FINN executed {frames} frame(s) in {secs:.3f} s",
              file=sys.stderr)

    def run(model, feeds):
        """feeds: {name: [frames, ...]} -> ({name: stacked outputs}, seconds)."""
        outs = {}
        t0 = time.perf_counter()
        for f in range(frames):
            o = functional.execute(model, {k: v[f:f + 1] for k, v in feeds.items()})
            for k, v in o.items():
                outs.setdefault(k, []).append(v)
        return {k: _stack(v) for k, v in outs.items()}, time.perf_counter() - t0

    if "partitions" in cases:
        for device, part in parts:
            feeds = {i.name: _random(rng, part, i.name, frames) for i in part.graph.input}
            outs, secs = run(part, feeds)
            timed(f"{device} on random inputs", secs)
            result.append({"name": f"{device} on random inputs", "model": device,
                           "inputs": {k: w.save(v) for k, v in feeds.items()},
                           "outputs": {k: w.save(v) for k, v in outs.items()}})
    if "chain" in cases or "whole" in cases:
        feeds = {i.name: _random(rng, whole, i.name, frames) for i in whole.graph.input}
        in_files = {k: w.save(v) for k, v in feeds.items()}
        if "chain" in cases:
            t0 = time.perf_counter()
            cut = {}
            for f in range(frames):
                tensors = functional.execute_chain([p for _, p in parts],
                                                   {k: v[f:f + 1] for k, v in feeds.items()})
                for _, p in parts:
                    for o in p.graph.output:
                        cut.setdefault(o.name, []).append(tensors[o.name])
            timed("chain of partitions", time.perf_counter() - t0)
            result.append({"name": "chain of partitions", "model": "@chain",
                           "inputs": in_files,
                           "outputs": {k: w.save(_stack(v)) for k, v in cut.items()}})
        if "whole" in cases:
            outs, secs = run(whole, feeds)
            timed("unpartitioned model", secs)
            out_files = {k: w.save(v) for k, v in outs.items()}
            result.append({"name": "unpartitioned model", "model": "whole",
                           "inputs": in_files, "outputs": out_files})
            result.append({"name": "chain of partitions = unpartitioned model", "model": "@chain",
                           "inputs": in_files, "outputs": out_files})
    with open(os.path.join(out, "reference.json"), "w") as f:
        json.dump({"format": FORMAT, "frames": frames, "seed": seed, "cases": result}, f, indent=1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="the unpartitioned HW model")
    ap.add_argument("--partitions", help="split_partitions.py output dir (cases partitions, chain)")
    ap.add_argument("--frames", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    finn_env.setup()
    cases = [c for c in a.cases.split(",") if c]
    bad = [c for c in cases if c not in CASES]
    if bad or a.frames < 1:
        print(f"error: exec_reference: unknown case(s) {bad} (known: {', '.join(CASES)}) "
              "or --frames < 1", file=sys.stderr)
        return 2
    if a.partitions is None and ("partitions" in cases or "chain" in cases):
        print("error: exec_reference: the cases partitions and chain need --partitions",
              file=sys.stderr)
        return 2
    stage = finn_env.StagedDir(a.out, ".ref_")
    try:
        with stage as tmp:
            build(a.model, a.partitions, a.frames, a.seed, cases, tmp)
    except (UserError, OSError, KeyError, ValueError) as e:
        print(f"error: exec_reference: {e}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
