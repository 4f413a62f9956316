"""Checks of `aurora-host infer` against FINN's reference (deploy/tests/infer_matches_finn.sh).

    infer_check.py files REF                      prints the image and output .npy of REF's
                                                  "unpartitioned model" case
    infer_check.py compare FINN_OUT.npy DIR LOG [N|all]
                                                  DIR/outputs.npy == FINN's (its first N
                                                  images), run.json agrees, no note in LOG
    infer_check.py wrong-shape IMAGES.npy OUT.npy writes the images with one row cut off
    infer_check.py wrong-shape-error IMAGES.npy WRONG.npy LOG
                                                  the error names the file and both shapes
"""

import json
import os
import sys

import numpy as np


def fail(msg):
    print(f"FAIL {msg}")
    sys.exit(1)


def files(ref):
    with open(os.path.join(ref, "reference.json")) as f:
        cases = json.load(f)["cases"]
    case = next(c for c in cases if c["name"] == "unpartitioned model")
    (images,) = case["inputs"].values()
    (outputs,) = case["outputs"].values()
    print(images, outputs)


def compare(finn_out, out_dir, log, count="all"):
    want = np.load(finn_out)
    if count != "all":
        want = want[: int(count)]
    got = np.load(os.path.join(out_dir, "outputs.npy"))
    if got.dtype != np.int64:
        fail(f"outputs.npy has dtype {got.dtype}, expected int64")
    if got.shape != want.shape:
        fail(f"outputs.npy has shape {got.shape}, FINN's output {want.shape}")
    if not np.array_equal(got, want.astype(np.int64)):
        bad = np.argwhere(got != want.astype(np.int64))
        fail(f"outputs differ from FINN's execution at {len(bad)} positions, first {bad[0].tolist()}")
    n = want.shape[0]
    with open(os.path.join(out_dir, "run.json")) as f:
        run = json.load(f)
    for key in ("deployment", "command", "images", "devices", "links", "frames", "wall_s"):
        if key not in run:
            fail(f"run.json has no {key}")
    if run["command"] != "infer" or run["images"] != n or len(run["frames"]) != n:
        fail(f"run.json: command {run['command']}, images {run['images']}, {len(run['frames'])} frames; want infer, {n}")
    flat = want.reshape(n, -1).astype(np.int64)
    for fr in run["frames"]:
        ref = flat[fr["index"]]
        if not fr["bit_exact"] or fr["reference_top1"] != int(ref[0]) or fr["top1"] != int(ref[0]):
            fail(f"run.json frame {fr['index']}: {fr} against FINN's {ref.tolist()}")
    if not run["links"]:
        fail("run.json lists no link")
    for link in run["links"]:
        last = link["final"]
        if not all(isinstance(v, int) for v in last.values()):
            fail(f"run.json link {link['name']}: counters are not integers: {last}")
        if last["overflow"] != 0 or last["tx_beats"] != last["rx_beats"] or last["tx_beats"] == 0:
            fail(f"run.json link {link['name']}: {last}")
        if not link["samples"] or any(s["rx_beats"] > last["rx_beats"] for s in link["samples"]):
            fail(f"run.json link {link['name']}: samples {link['samples'][:3]} ...")
        times = [s["t_s"] for s in link["samples"]]
        if times != sorted(times):
            fail(f"run.json link {link['name']}: sample times go back: {times}")
        # The series ends with the run's final counters, so its chart reaches the totals.
        end = {k: v for k, v in link["samples"][-1].items() if k != "t_s"}
        if any(end[k] != last[k] for k in end):
            fail(f"run.json link {link['name']}: the last sample {end} is not the final count {last}")
    text = open(log).read()
    if f"top-1 agreement {n}/{n}, top-5 agreement {n}/{n}, bit-exact {n}/{n}" not in text:
        fail(f"the log has no agreement line for {n} of {n} images")
    # The weights line: a model without a training record (the generated networks, seeded
    # random weights) is called untrained, so nobody reads its classes as predictions.
    want_weights = "weights: trained (" if run.get("training") else "weights: untrained ("
    if want_weights not in text:
        fail(f"the log has no {want_weights!r} line (run.json training: {run.get('training')!r})")
    # A run that fills every stream's words has nothing to note (a partial word in a width
    # converter would have failed the run).
    notes = [line for line in text.splitlines() if line.startswith("note:") or "partial word" in line]
    if notes:
        fail(f"the log of {n} images has notes: {notes}")
    # The run report beside run.json: the page names the deployment and the paper's
    # measured figures (its DOM is checked in Chromium by //host/run_report:report_renders).
    report = os.path.join(out_dir, "report.html")
    if not os.path.isfile(report):
        fail(f"infer wrote no run report {report}")
    page = open(report).read()
    for want_text in (run["deployment"], "paper-measured", "4,460.92", "0.89"):
        if want_text not in page:
            fail(f"{report} does not show {want_text!r}")
    if "run report: " not in text:
        fail("the log does not name the run report")
    for line in ("modelled: ", "simulated: "):
        if line not in text:
            fail(f"the log has no {line!r} line (the pipelined model's figures)")
    print(f"ok   {n} images bit-exact with FINN's execution; run.json: {len(run['links'])} link(s), "
          f"{sum(len(link['samples']) for link in run['links'])} samples")


def wrong_shape(images, out):
    a = np.load(images)
    np.save(out, a[:, :-1])


def wrong_shape_error(images, wrong, log):
    a = np.load(images)
    text = open(log).read()
    got = list(np.load(wrong).shape)
    expected = [1] + list(a.shape[1:])
    for needle in (wrong, f"shape {got}", f"expected {expected}"):
        if needle not in text:
            fail(f"the error does not name {needle!r}:\n{text}")
    print(f"ok   the wrong-shape file is refused: {wrong}, shape {got}, expected {expected}")


if __name__ == "__main__":
    cmd, args = sys.argv[1], sys.argv[2:]
    {"files": files, "compare": compare, "wrong-shape": wrong_shape,
     "wrong-shape-error": wrong_shape_error}[cmd](*args)
