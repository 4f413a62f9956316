#!/usr/bin/env python3
"""Benchmark: FINN+'s partitioner against ours on the same MobileNet-V1 estimates.

    compare.py --model hw_model.onnx --estimates estimates.json --partitioner BIN
               [--devices 2 3 4 8] [--out results.json]

Both placements are scored by one evaluator over the same FINN estimates and the
same device totals (FINN+'s U280 platform model, 80 % max utilisation): max device
utilisation, imbalance, cuts, cut bandwidth at the predicted FPS, solve time.
Then our throughput objective (each layer's folding chosen with its device) on
U280s at 250 MHz, and a synthetic 500-layer network on 48 devices.
Prints a Markdown report; exits non-zero only if a run could not be made.
"""

import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
# FINN+ util/platforms.py Alveo_NxU280_Platform, summed over its three SLRs.
FINNPLUS_U280 = {"LUT": 1163520, "FF": 2327040, "BRAM_18K": 3504, "URAM": 960, "DSP": 8496}
SCORED = ["LUT", "BRAM_18K", "DSP"]
# The U280's one source, its platform file: devices name it by path.
U280_PLATFORM = os.path.join(HERE, "..", "..", "toolchains", "fpga_platforms",
                             "xilinx_u280_gen3x16_xdma_1_202211_1.toml")
# The paper's figures: their one copy, which the run report compiles in too.
with open(os.path.join(HERE, "..", "..", "paper", "figures.toml"), "rb") as _f:
    _PAPER = tomllib.load(_f)["mobilenet_2fpga"]
PAPER_FPS, PAPER_LATENCY_MS = _PAPER["fps"], _PAPER["latency_ms"]
PAPER_CLOCKS = "/".join(str(c) for c in _PAPER["clk_mhz"])


def devices_json(n, total=None, max_util=0.8, clk=250.0, reserve=True):
    mu = {k: max_util for k in ["LUT", "FF", "BRAM_18K", "URAM", "DSP"]}
    devs = []
    for i in range(n):
        d = {"name": f"fpga{i}", "clk_mhz": clk, "max_util": mu, "reserve_link_kernels": reserve}
        if total:
            d.update({"total": total, "ports": 2})
        else:
            # The board's one source: its platform file (a path the partitioner resolves).
            d["platform"] = U280_PLATFORM
        devs.append(d)
    return {"devices": devs}


def ours(binary, est, devs, topology, objective, work, tag, time_limit=60):
    dpath, tpath = os.path.join(work, f"{tag}_dev.json"), os.path.join(work, f"{tag}_topo.json")
    out = os.path.join(work, f"{tag}_plan.json")
    timing = os.path.join(work, f"{tag}_timing.json")
    with open(dpath, "w") as f:
        json.dump(devs, f)
    with open(tpath, "w") as f:
        json.dump({"kind": topology}, f)
    t0 = time.perf_counter()
    r = subprocess.run([binary, "--estimates", est, "--devices", dpath, "--topology", tpath,
                        "--objective", objective, "--out", out, "--timing-out", timing,
                        "--time-limit", str(time_limit)],
                       capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        return {"error": r.stderr.strip(), "seconds": wall}
    plan = json.load(open(out))
    # the solver's time is not part of the (deterministic) plan: it has its own file
    seconds = json.load(open(timing))["solver_seconds"]
    return {"plan": plan, "seconds": seconds, "wall": wall,
            "mapping": {layer["name"]: int(layer["device"][4:]) for layer in plan["layers"]}}


def finnplus(model, n, topology, work):
    out = os.path.join(work, f"fp_{n}_{topology}.json")
    subprocess.run([sys.executable, os.path.join(HERE, "finnplus_partition.py"), "--in", model,
                    "--devices", str(n), "--topology", topology, "--out", out],
                   capture_output=True, text=True, env={**os.environ, "LC_ALL": "C"})
    try:
        return json.load(open(out))
    except OSError:
        return {"error": "FINN+ run produced no result"}


def score(est, mapping, n):
    """Same evaluator for both: utilisation against FINN+'s U280 totals, cuts, FPS."""
    layers = est["layers"]
    use = [{r: 0.0 for r in SCORED} for _ in range(n)]
    for layer in layers:
        for r in SCORED:
            use[mapping[layer["name"]]][r] += layer["res"][r]
    util = [max(u[r] / FINNPLUS_U280[r] for r in SCORED) for u in use]
    fps = 1e9 / est["clk_ns"] / max(layer["cycles"] for layer in layers)
    cut_bits, cuts = 0, 0
    for layer in layers:
        for p in layer["preds"]:
            if mapping[p] != mapping[layer["name"]]:
                cuts += 1
                cut_bits += next(x for x in layers if x["name"] == p)["out_bits_per_frame"]
    ports = [0] * n
    pairs = {tuple(sorted((mapping[p], mapping[layer["name"]]))) for layer in layers for p in layer["preds"]
             if mapping[p] != mapping[layer["name"]]}
    for a, b in pairs:
        ports[a] += 1
        ports[b] += 1
    return {"max_util": max(util), "min_util": min(util), "cuts": cuts, "fps": fps,
            "cut_gbps": cut_bits * fps / 1e9, "max_ports": max(ports), "used": sum(1 for u in util if u > 0)}


def fmt_row(cells):
    return "| " + " | ".join(str(c) for c in cells) + " |"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True, help="FINN HW model (after estimate reports)")
    ap.add_argument("--estimates", required=True, help="its export_estimates.py JSON")
    ap.add_argument("--partitioner", required=True, help="finn-partition binary")
    ap.add_argument("--devices", type=int, nargs="+", default=[2, 3, 4, 8])
    ap.add_argument("--out")
    a = ap.parse_args()
    est = json.load(open(a.estimates))
    work = tempfile.mkdtemp(prefix="finn_bench_")
    atexit.register(shutil.rmtree, work, ignore_errors=True)  # on every exit path
    results = {"balanced": [], "throughput": [], "synthetic": None}
    lines = ["## Balanced partitioning: FINN+ 1.6.1 vs ours (same estimates, FINN+'s U280 totals, 80 % cap)", "",
             fmt_row(["devices", "topology", "tool", "solve s", "max util", "min util", "cuts", "max ports",
                      "cut Gb/s", "FPS"]),
             fmt_row(["---"] * 10)]
    for n in a.devices:
        for topo_fp, topo_ours in [("chain", "chain"), ("returnchain", None), ("circle", "ring")]:
            fp = finnplus(a.model, n, topo_fp, work)
            row = {"devices": n, "topology": topo_fp, "tool": "FINN+", **{k: fp.get(k) for k in ("seconds", "error")}}
            if "mapping" in fp:
                row.update(score(est, fp["mapping"], n))
                lines.append(fmt_row([n, topo_fp, "FINN+", f"{fp['seconds']:.2f}", f"{row['max_util']:.3f}",
                                      f"{row['min_util']:.3f}", row["cuts"], row["max_ports"],
                                      f"{row['cut_gbps']:.2f}", f"{row['fps']:.1f}"]))
            else:
                lines.append(fmt_row([n, topo_fp, "FINN+", f"{fp.get('seconds', 0):.2f}",
                                      "rejected: " + fp.get("error", "?")[:80], "", "", "", "", ""]))
            results["balanced"].append(row)
            if topo_ours is None:
                continue
            o = ours(a.partitioner, a.estimates, devices_json(n, FINNPLUS_U280, reserve=False), topo_ours,
                     "balanced", work, f"bal_{n}_{topo_ours}")
            row = {"devices": n, "topology": topo_ours, "tool": "ours", "seconds": o.get("seconds"),
                   "error": o.get("error")}
            if "mapping" in o:
                row.update(score(est, o["mapping"], n))
                row["optimal"] = o["plan"]["solver"]["optimal"]
                lines.append(fmt_row([n, topo_ours, "ours", f"{o['seconds']:.2f}", f"{row['max_util']:.3f}",
                                      f"{row['min_util']:.3f}", row["cuts"], row["max_ports"],
                                      f"{row['cut_gbps']:.2f}", f"{row['fps']:.1f}"]))
            else:
                lines.append(fmt_row([n, topo_ours, "ours", "", "error: " + o["error"][:80], "", "", "", "", ""]))
            results["balanced"].append(row)

    lines += ["", "## Throughput objective (folding chosen per layer with its device), U280 at 250 MHz", "",
              fmt_row(["devices", "max util cap", "FPS", "FINN no-overlap latency ms", "cuts", "solve s", "optimal"]),
              fmt_row(["---"] * 7)]
    for cap in (0.8, 0.2):
        for n in [1] + a.devices:
            o = ours(a.partitioner, a.estimates, devices_json(n, max_util=cap), "chain", "throughput", work,
                     f"thr_{n}_{cap}")
            if "plan" in o:
                p = o["plan"]
                lines.append(fmt_row([n, cap, f"{p['fps']:.1f}", f"{p['finn_no_overlap_latency_ms']:.3f}", len(p["cuts"]),
                                      f"{o['seconds']:.2f}", p["solver"]["optimal"]]))
                results["throughput"].append({"devices": n, "cap": cap, "fps": p["fps"],
                                              "finn_no_overlap_latency_ms": p["finn_no_overlap_latency_ms"], "seconds": o["seconds"],
                                              "bottleneck": p["bottleneck"]})
            else:
                lines.append(fmt_row([n, cap, "infeasible", "", "", f"{o['seconds']:.2f}", o["error"][:90]]))
    base_fps = 1e9 / est["clk_ns"] / max(layer["cycles"] for layer in est["layers"])
    lines += ["", f"FINN's own estimate for the exported folding: {base_fps:.1f} FPS at {1000 / est['clk_ns']:.0f} MHz. "
              f"Paper (2x U280, {PAPER_CLOCKS} MHz, measured): {PAPER_FPS} FPS, {PAPER_LATENCY_MS} ms."]

    syn = os.path.join(work, "syn500.json")
    subprocess.run([sys.executable, os.path.join(HERE, "synthetic.py"), "--layers", "500", "--out", syn], check=True)
    lines += ["", "## Scale: synthetic 500-layer chain on 48 U280s (time limit 10 s)", "",
              fmt_row(["objective", "solve s", "wall s", "optimal", "gap"]), fmt_row(["---"] * 5)]
    results["synthetic"] = []
    for obj in ("balanced", "min-cut"):
        o = ours(a.partitioner, syn, devices_json(48), "chain", obj, work, f"syn_{obj}", time_limit=10)
        if "plan" in o:
            s = o["plan"]["solver"]
            lines.append(fmt_row([obj, f"{s['seconds']:.2f}", f"{o['wall']:.2f}", s["optimal"], f"{s['gap']:.4%}"]))
            results["synthetic"].append({"objective": obj, **s, "wall": o["wall"]})
        else:
            lines.append(fmt_row([obj, f"{o['seconds']:.2f}", "", False, o["error"][:90]]))
            results["synthetic"].append({"objective": obj, "error": o["error"]})
    print("\n".join(lines))
    if a.out:
        with open(a.out, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
