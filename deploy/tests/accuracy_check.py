"""Accuracy of a trained network through a multi-card deployment, against real labels.

    accuracy_check.py --deployment NAME --run RUN_SCRIPT --data DIR --bound-points N

DIR (a `finn_train` output, e.g. finn/digits/train.py's) holds the held-out images.npy,
labels.npy, the float network's weights float.npz (an MLP: w0, b0, w1, b1, ... with ReLU
between) and accuracy.json. The check:
  1. the float network's held-out top-1, computed here with numpy from float.npz, equals
     the one scikit-learn reported at training (accuracy.json);
  2. `infer --input images.npy --labels labels.npy` through every card: every output
     bit-exact with the unpartitioned model, run.json's top-1 / top-5 hits of the pipeline
     equal the unpartitioned model's exactly and equal what this script counts from
     outputs.npy and the labels, and the log and the run report show both accuracies and
     the log says "weights: trained";
  3. both top-1 accuracies are at least the float top-1 minus N percentage points;
  4. a labels file one label short, and one of float dtype, are refused naming the file.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def fail(msg):
    print(f"FAIL {msg}")
    sys.exit(1)


def float_top1(data):
    """The float MLP's held-out top-1, from its weights alone."""
    w = np.load(os.path.join(data, "float.npz"))
    x = np.load(os.path.join(data, "images.npy")).astype(np.float64) / 16.0
    labels = np.load(os.path.join(data, "labels.npy"))
    layers = len([k for k in w.files if k.startswith("w")])
    for i in range(layers):
        x = x @ w[f"w{i}"] + w[f"b{i}"]
        if i < layers - 1:
            x = np.maximum(x, 0)
    return float(np.mean(np.argmax(x, axis=1) == labels))


def infer(run, out, log, images, labels, timeout=600):
    cmd = ["bash", run, "local", "infer", "--input", images, "--labels", labels, "--out", out]
    with open(log, "w") as f:
        p = subprocess.run(cmd, stdout=f, stderr=subprocess.STDOUT, timeout=timeout)
    text = open(log).read()
    return p.returncode, text


def check_run(name, out, text, labels, float_acc, bound):
    run = json.load(open(os.path.join(out, "run.json")))
    n = len(labels)
    acc = run.get("accuracy")
    if acc is None:
        fail(f"{name}: run.json has no accuracy with --labels")
    if acc["images"] != n or run["images"] != n:
        fail(f"{name}: run.json counts {acc['images']} labelled / {run['images']} images, want {n}")
    if not all(f["bit_exact"] for f in run["frames"]):
        fail(f"{name}: not every output is bit-exact with the unpartitioned model")
    if acc["pipeline"] != acc["unpartitioned"]:
        fail(f"{name}: pipeline {acc['pipeline']} != unpartitioned {acc['unpartitioned']}")
    # The hits counted here from the pipeline's outputs (class indices, best first).
    outputs = np.load(os.path.join(out, "outputs.npy")).reshape(n, -1)
    top1 = int(np.sum(outputs[:, 0] == labels))
    top5 = int(np.sum(np.any(outputs[:, :5] == labels[:, None], axis=1)))
    if acc["pipeline"] != {"top1": top1, "top5": top5}:
        fail(f"{name}: run.json says {acc['pipeline']}, the outputs give top1 {top1}, top5 {top5}")
    for who in ("multi-card pipeline", "unpartitioned model"):
        want = f"({who}): top-1 {100 * top1 / n:.2f} % ({top1}/{n}), top-5 {100 * top5 / n:.2f} %"
        if want not in text:
            fail(f"{name}: the log has no line {want!r}")
    page = open(os.path.join(out, "report.html")).read()
    for who in ("multi-card pipeline", "unpartitioned model"):
        want = f"{100 * top1 / n:.2f} % top-1, {100 * top5 / n:.2f} % top-5 ({top1}/{n}, {top5}/{n})"
        if f"accuracy against the labels, {who}" not in page or want not in page:
            fail(f"{name}: the run report does not show the {who}'s accuracy {want!r}")
    if "weights: trained (" not in text:
        fail(f"{name}: the log does not say the weights are trained")
    measured = top1 / n
    if measured < float_acc - bound / 100:
        fail(f"{name}: top-1 {100 * measured:.2f} % is more than {bound} points below the float "
             f"network's {100 * float_acc:.2f} %")
    print(f"ok   {name}: {n} held-out images, top-1 {100 * measured:.2f} % ({top1}/{n}) on the "
          f"cards = unpartitioned, top-5 {100 * top5 / n:.2f} %; float top-1 {100 * float_acc:.2f} %, "
          f"bound {bound} points")


def check_refused(name, run, scratch, images, labels, bad, what, needles):
    path = os.path.join(scratch, f"{what}.npy")
    np.save(path, bad)
    status, text = infer(run, os.path.join(scratch, what), os.path.join(scratch, f"{what}.log"),
                         images, path, timeout=120)
    if status == 0:
        fail(f"{name}: infer accepted {what} labels {path}")
    for needle in [path] + needles:
        if needle not in text:
            fail(f"{name}: the error for {what} labels does not name {needle!r}:\n{text}")
    print(f"ok   {name}: {what} labels refused: {path}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--deployment", required=True)
    ap.add_argument("--run", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--bound-points", type=float, required=True)
    a = ap.parse_args()
    data = os.path.abspath(a.data)
    images = os.path.join(data, "images.npy")
    labels_path = os.path.join(data, "labels.npy")
    labels = np.load(labels_path)
    reported = json.load(open(os.path.join(data, "accuracy.json")))
    float_acc = float_top1(data)
    if abs(float_acc - reported["float_top1"]) > 1e-12:
        fail(f"float top-1 from the weights {float_acc} != scikit-learn's {reported['float_top1']}")
    with tempfile.TemporaryDirectory() as scratch:
        out_root = os.environ.get("TEST_OUTPUT_DIR") or scratch
        out = os.path.join(out_root, f"{a.deployment}.accuracy")
        log = out + ".log"
        status, text = infer(a.run, out, log, images, labels_path)
        print(text)
        if status != 0:
            fail(f"{a.deployment}: infer --labels exited {status} (log: {log})")
        check_run(a.deployment, out, text, labels, float_acc, a.bound_points)
        n = len(labels)
        check_refused(a.deployment, a.run, scratch, images, labels, labels[:-1], "short",
                      [f"{n - 1} labels for the {n} images"])
        check_refused(a.deployment, a.run, scratch, images, labels, labels.astype(np.float32),
                      "float", ["<f4 is not an integer"])


if __name__ == "__main__":
    main()
