#!/usr/bin/env python3
"""Train a small MLP on scikit-learn's bundled digits and export it, quantised, as QONNX.

The data set is `sklearn.datasets.load_digits` (scikit-learn 1.7.2: 1797 8x8 images of
handwritten digits, pixel values 0..16, ten classes; the UCI "Optical Recognition of
Handwritten Digits" test set), shipped inside the package, so nothing is downloaded.

Steps, all seeded and single-threaded (the bytes of every output are stable run to run):
  1. a fixed stratified split: 75 % training, 25 % held out (``TEST_FRACTION``, ``SEED``);
  2. `MLPClassifier` 64 -> 64 -> 64 -> 10 (ReLU) on the pixels divided by 16;
  3. post-training quantisation to FINN's types: 4-bit weights (per output channel on the
     hidden layers, per tensor on the classifier, whose bias goes on its integer grid) and
     4-bit unsigned activations, each activation's clip value the one of a fixed grid that
     scores best on the training images;
  4. the QONNX graph (UINT8 input -> Mul(1/16) -> [MatMul -> Add -> Relu -> Quant] x 2 ->
     MatMul -> Add -> TopK(5)), built with finn/models/gen_model.py's helpers, which FINN's
     front end streamlines to MVAU + Thresholding layers, an ElementwiseAdd and LabelSelect.

Outputs (``--out-dir``): model.onnx, images.npy (the held-out images, uint8 [N, 64]),
labels.npy (their classes, int64 [N]), float.npz (the float model's weights, for a check
that does not trust this script) and accuracy.json (float and quantised held-out top-1,
top-5 of the quantised model, as computed here with numpy).
"""

import os

# One BLAS thread: multi-threaded reductions may sum in another order, and the weights
# (and so the model's bytes) must not depend on the machine's core count.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models"))
import gen_model  # noqa: E402  (the QONNX helpers, shared with the generated networks)

SEED = 0
TEST_FRACTION = 0.25
HIDDEN = (64, 64)
WBITS = 4
ABITS = 4
TOPK = 5
# load_digits' pixels are 0..16 (scikit-learn's dataset description).
PIXEL_MAX = 16.0
# Clip values tried for each activation, as fractions of its largest training value.
CLIP_GRID = np.linspace(0.2, 1.0, 17)
# The metadata key of a trained model's record (read by the host driver, host/driver).
TRAINING_PROP = "auroraforge.training"


def load_split():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    x, y = load_digits(return_X_y=True)
    return train_test_split(
        x.astype(np.uint8), y.astype(np.int64),
        test_size=TEST_FRACTION, random_state=SEED, stratify=y,
    )


def train_float(x_train, y_train):
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.neural_network import MLPClassifier

    mlp = MLPClassifier(
        hidden_layer_sizes=HIDDEN, activation="relu", solver="adam", alpha=1e-3,
        max_iter=400, random_state=SEED,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        mlp.fit(x_train / PIXEL_MAX, y_train)
    return mlp


def quant_weight(w, per_channel):
    """Symmetric narrow WBITS-bit grid: (integer weights, scale) with w ~ w_int * scale.

    `w` is [in, out] (MatMul); a per-channel scale is per output column."""
    qmax = 2 ** (WBITS - 1) - 1
    amax = np.abs(w).max(axis=0, keepdims=True) if per_channel else np.abs(w).max()
    scale = (np.maximum(amax, 1e-8) / qmax).astype(np.float32)
    w_int = np.clip(np.round(w / scale), -qmax, qmax).astype(np.float32)
    return w_int, scale


def quant_act(a, scale):
    """QONNX Quant, unsigned, ROUND (half to even, as numpy) on ABITS bits."""
    return np.clip(np.round(a / scale), 0, 2 ** ABITS - 1) * scale


def best_clip(z, mlp, i, y_train):
    """The activation scale of hidden layer `i` (pre-activations `z` on the training
    images) whose clip value from CLIP_GRID scores best with the float layers after it."""
    levels = 2 ** ABITS - 1
    best = None
    for frac in CLIP_GRID:
        scale = np.float32(frac * z.max() / levels)
        x = quant_act(z, scale)
        for j in range(i + 1, len(mlp.coefs_)):
            x = x @ mlp.coefs_[j] + mlp.intercepts_[j]
            if j < len(mlp.coefs_) - 1:
                x = np.maximum(x, 0)
        acc = float(np.mean(np.argmax(x, axis=1) == y_train))
        if best is None or acc > best[0]:
            best = (acc, scale)
    return best[1]


class Quantised:
    """The quantised network as numbers: per layer (w_int, w_scale, bias, act_scale)."""

    def __init__(self, mlp, x_train, y_train):
        self.layers = []
        n = len(mlp.coefs_)
        x = x_train.astype(np.float32) / np.float32(PIXEL_MAX)
        for i, (w, b) in enumerate(zip(mlp.coefs_, mlp.intercepts_)):
            last = i == n - 1
            w_int, w_scale = quant_weight(w.astype(np.float32), per_channel=not last)
            layer = {"w_int": w_int, "w_scale": w_scale, "bias": b.astype(np.float32)}
            self.layers.append(layer)
            if last:
                break
            z = np.maximum(x @ (w_int * w_scale) + layer["bias"], 0)
            layer["act_scale"] = best_clip(z, mlp, i, y_train)
            x = quant_act(z, layer["act_scale"])
        # The classifier's bias on its accumulator's grid (input scale x weight scale), so
        # FINN keeps it an integer Add (finn/flow/run_step.py, mnv1_tail).
        cls = self.layers[-1]
        acc_scale = np.float32(self.layers[-2]["act_scale"] * cls["w_scale"])
        cls["bias"] = (np.round(cls["bias"] / acc_scale) * acc_scale).astype(np.float32)

    def scores(self, images):
        x = images.astype(np.float32) / np.float32(PIXEL_MAX)
        for layer in self.layers:
            x = x @ (layer["w_int"] * layer["w_scale"]) + layer["bias"]
            if "act_scale" in layer:
                x = quant_act(np.maximum(x, 0), layer["act_scale"])
        return x


def to_qonnx(q):
    b = gen_model.Builder(SEED)
    from onnx import TensorProto, helper

    inp = helper.make_tensor_value_info("global_in", TensorProto.FLOAT, [1, 64])
    x = b.node("Mul", ["global_in", b.const("inv16", np.float32(1.0 / PIXEL_MAX))])
    for layer in q.layers:
        last = "act_scale" not in layer
        w = b.const("w", layer["w_int"] * layer["w_scale"])
        w = b.quant(w, layer["w_scale"], WBITS, signed=True, narrow=True)
        x = b.node("MatMul", [x, w])
        x = b.node("Add", [x, b.const("bias", layer["bias"])])
        if not last:
            x = b.node("Relu", [x])
            x = b.quant(x, layer["act_scale"], ABITS, signed=False, narrow=False)
    _, idx = b.node("TopK", [x, b.const_int64("k", [TOPK])], {"axis": -1}, n_out=2)
    out = helper.make_tensor_value_info(idx, TensorProto.INT64, [1, TOPK])
    graph = helper.make_graph(b.nodes, "digits_mlp_w4a4", [inp], [out], initializer=b.inits)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", 11), helper.make_opsetid(gen_model.QONNX_DOMAIN, 2)],
        producer_name="auroraforge-finn-digits",
    )
    model.ir_version = 8
    return model


def write_atomic(path, write):
    """`write(tmp_path)` then rename: a failed run leaves no half-written output."""
    d = os.path.dirname(os.path.abspath(path))
    os.makedirs(d, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
    os.close(fd)
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def save_npy(path, array):
    def write(tmp):
        with open(tmp, "wb") as f:
            np.save(f, array)

    write_atomic(path, write)


def topk_accuracy(scores, labels, k):
    # Stable sort on the negated scores: ties go to the lower index, as ONNX TopK.
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return float(np.mean(np.any(order == labels[:, None], axis=1)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out-dir", required=True)
    a = ap.parse_args(argv)
    import onnx

    x_train, x_test, y_train, y_test = load_split()
    mlp = train_float(x_train, y_train)
    q = Quantised(mlp, x_train, y_train)
    model = to_qonnx(q)
    onnx.checker.check_model(model)
    mw = gen_model.finalize(model)
    float_top1 = float(mlp.score(x_test / PIXEL_MAX, y_test))
    # The model's record of its training (ONNX metadata_props, kept through FINN's steps):
    # the host driver prints it, and says "untrained" for a model without one.
    onnx.helper.set_model_props(mw.model, {TRAINING_PROP: (
        f"MLPClassifier {'-'.join(str(h) for h in (64,) + HIDDEN + (10,))} trained by "
        f"finn/digits/train.py on sklearn.datasets.load_digits ({len(y_train)} images, seed "
        f"{SEED}), {WBITS}-bit weights and {ABITS}-bit activations after training; held-out "
        f"float top-1 {100 * float_top1:.2f} %"
    )})
    out = a.out_dir
    gen_model.save_atomic(mw, os.path.join(out, "model.onnx"))
    save_npy(os.path.join(out, "images.npy"), x_test)
    save_npy(os.path.join(out, "labels.npy"), y_test)

    def write_float(tmp):
        with open(tmp, "wb") as f:
            np.savez(f, **{f"w{i}": w for i, w in enumerate(mlp.coefs_)},
                     **{f"b{i}": b for i, b in enumerate(mlp.intercepts_)})

    write_atomic(os.path.join(out, "float.npz"), write_float)
    qs = q.scores(x_test)
    acc = {
        "dataset": "sklearn.datasets.load_digits",
        "held_out_images": int(len(y_test)),
        "train_images": int(len(y_train)),
        "split": {"test_size": TEST_FRACTION, "random_state": SEED, "stratify": True},
        "float_top1": float_top1,
        "quantised_top1": topk_accuracy(qs, y_test, 1),
        "quantised_top5": topk_accuracy(qs, y_test, TOPK),
    }

    def write_json(tmp):
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(json.dumps(acc, indent=2, sort_keys=True) + "\n")

    write_atomic(os.path.join(out, "accuracy.json"), write_json)
    print(json.dumps(acc, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
