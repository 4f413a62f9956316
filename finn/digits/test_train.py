"""finn/digits/train.py gives the same bytes on every run (the model, the held-out data, the
float weights and the accuracy record), so its action is reproducible and cacheable.

Two runs as separate processes, as the build runs it (each sets its own BLAS threads)."""

import os
import pathlib
import subprocess
import sys
import tempfile

TRAIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "train.py")
OUTPUTS = ["model.onnx", "images.npy", "labels.npy", "float.npz", "accuracy.json"]


def _run(out_dir):
    subprocess.run([sys.executable, TRAIN, "--out-dir", str(out_dir)], check=True,
                   stdout=subprocess.DEVNULL)
    return {f: (out_dir / f).read_bytes() for f in OUTPUTS}


def test_two_runs_give_the_same_bytes():
    # tempfile, not pytest's tmp_path: the test's TMPDIR must be empty when it ends.
    with tempfile.TemporaryDirectory() as d:
        tmp = pathlib.Path(d)
        first = _run(tmp / "a")
        second = _run(tmp / "b")
        for f in OUTPUTS:
            assert first[f] == second[f], f"{f} differs between two runs"
        assert sorted(os.listdir(tmp / "a")) == sorted(OUTPUTS), "train.py left other files"
