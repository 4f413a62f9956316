#!/usr/bin/env python3
"""Images/s of the Rust executor (host/finn_exec) against FINN's Python execution on the
same partition models, measured in one run on the same random images.

    .venv/finn/bin/python finn/bench/exec_bench.py --partitions PARTS --exec EXEC \\
        --bin FINN_EXEC [--finn-images 2] [--rust-images 20] [--seed 1]

PARTS is `//finn/mobilenet_v1:partition_2fpga[partitions]`, EXEC its `[exec]`, FINN_EXEC
the `//host/finn_exec:finn-exec` binary (`./forge build ... --show-output` prints them).
FINN runs the partitions one after another (finn/flow/functional.py `execute_chain`),
the executor runs the exported chain through its CLI (load time included, one thread) on
the same images; the outputs of the images both ran are compared too. Besides wall-clock
images/s it reports CPU seconds per image of each (all threads of FINN's BLAS included),
which a loaded machine distorts less. Prints a JSON record and a
README table row, with the machine load (1-minute load average) before and after.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "finn", "flow"))

import functional  # noqa: E402  (applies the FINN environment workarounds)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partitions", required=True)
    ap.add_argument("--exec", dest="exec_dir", required=True)
    ap.add_argument("--bin", required=True, help="the finn-exec binary")
    ap.add_argument("--finn-images", type=int, default=2)
    ap.add_argument("--rust-images", type=int, default=20)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args(argv)

    import numpy as np
    from qonnx.core.modelwrapper import ModelWrapper

    with open(os.path.join(a.partitions, "partitions.json")) as f:
        manifest = json.load(f)["partitions"]
    parts = [ModelWrapper(os.path.join(a.partitions, p["model"])) for p in manifest]
    inp = parts[0].graph.input[0].name
    out = parts[-1].graph.output[0].name
    shape = list(parts[0].get_tensor_shape(inp))
    dt = parts[0].get_tensor_datatype(inp)
    n = max(a.finn_images, a.rust_images)
    rng = np.random.default_rng(a.seed)
    images = rng.integers(int(dt.min()), int(dt.max()) + 1, size=[n] + shape[1:]).astype(np.float32)

    load_before = os.getloadavg()[0]
    t0, c0 = time.perf_counter(), time.process_time()
    finn_out = []
    for i in range(a.finn_images):
        finn_out.append(functional.execute_chain(parts, {inp: images[i:i + 1]})[out])
    finn_s, finn_cpu = time.perf_counter() - t0, time.process_time() - c0

    with tempfile.TemporaryDirectory() as d:
        x, y = os.path.join(d, "x.npy"), os.path.join(d, "y.npy")
        np.save(x, images[:a.rust_images].astype(np.uint8 if dt.name == "UINT8" else np.int64))
        t0 = time.perf_counter()
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([a.bin, "--model", a.exec_dir, "--input", x, "--output", y], check=True)
        rust_s = time.perf_counter() - t0
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        rust_cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
        rust_out = np.load(y)
    load_after = os.getloadavg()[0]

    k = min(a.finn_images, a.rust_images)
    expected = np.concatenate(finn_out[:k], axis=0).reshape(k, -1)
    same = bool(np.array_equal(expected.astype(np.int64), rust_out[:k].reshape(k, -1)))
    finn_fps = a.finn_images / finn_s
    rust_fps = a.rust_images / rust_s
    rec = {
        "partitions": len(parts), "finn_images": a.finn_images, "finn_seconds": round(finn_s, 2),
        "finn_images_per_s": round(finn_fps, 4), "rust_images": a.rust_images,
        "rust_seconds": round(rust_s, 2), "rust_images_per_s": round(rust_fps, 3),
        "ratio": round(rust_fps / finn_fps, 1),
        "finn_cpu_s_per_image": round(finn_cpu / a.finn_images, 2),
        "rust_cpu_s_per_image": round(rust_cpu / a.rust_images, 3),
        "cpu_time_ratio": round((finn_cpu / a.finn_images) / (rust_cpu / a.rust_images), 1),
        "outputs_equal_on_common_images": same,
        "load_avg_1min_before": load_before, "load_avg_1min_after": load_after,
        "cpus": os.cpu_count(),
    }
    print(json.dumps(rec))
    print(f"| {a.finn_images} | {finn_fps:.4f} | {a.rust_images} | {rust_fps:.2f} | "
          f"{rust_fps / finn_fps:.0f}x | {rec['cpu_time_ratio']:.0f}x | "
          f"{load_before:.1f} / {load_after:.1f} | {same} |")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
