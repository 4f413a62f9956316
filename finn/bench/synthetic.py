#!/usr/bin/env python3
"""Write a synthetic estimates JSON: a chain of N layers with seeded random resources.

    synthetic.py --layers 500 --seed 0 --out synthetic.json [--devices 48 --devices-out d.json]

Every layer needs between 0.2 % and 2 % of a U280 per resource, so 500 layers need
about 5 U280s' worth in total; with 48 devices the balanced objective has to spread
them thinly, which is what makes the instance large.
"""

import argparse
import json
import os
import random

# The U280's platform file, the one source of its totals and ports (the partitioner reads it).
U280 = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                    "toolchains/fpga_platforms/xilinx_u280_gen3x16_xdma_1_202211_1.toml")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", required=True)
    ap.add_argument("--devices", type=int, default=0)
    ap.add_argument("--devices-out")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    totals = {"LUT": 1_304_000, "BRAM_18K": 4032, "URAM": 960, "DSP": 9024}
    layers = []
    for i in range(a.layers):
        res = {k: round(v * rng.uniform(0.002, 0.02)) for k, v in totals.items()}
        res["FF"] = 0
        layers.append({
            "name": f"L{i}", "op_type": "Synthetic",
            "preds": [] if i == 0 else [f"L{i - 1}"],
            "out_bits_per_frame": rng.choice([8192, 16384, 65536, 200704, 401408]),
            "cycles": rng.randint(20000, 100000),
            "res": res,
        })
    with open(a.out, "w") as f:
        json.dump({"model": f"synthetic_{a.layers}", "clk_ns": 4.0, "layers": layers}, f)
    if a.devices_out:
        with open(a.devices_out, "w") as f:
            json.dump({"devices": [{"name": f"fpga{i}", "platform": U280, "clk_mhz": 250}
                                   for i in range(a.devices)]}, f)


if __name__ == "__main__":
    main()
