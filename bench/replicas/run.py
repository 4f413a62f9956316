#!/usr/bin/env python3
"""Scale of the question: MobileNet-V1 over 1, 2, 4 and 8 U280s with replicas.

For each card count it runs `finn-partition --objective throughput --replicas auto` on a
chain of U280s (250 MHz, FINN+'s 80 % budgets) and prints, as a Markdown table: the total
FPS, the copies of the pipeline, the FPS of one copy, the cut copies and their cuts, what
bounds one more copy (resource, card, layer, its utilisation there) and the solver's time.
It writes the same rows as JSON and a plot (total FPS and copies against cards, with
Elastic-DF's and the AuroraFlow paper's measured figures from paper/figures.toml) and
exits 1 if the total FPS ever falls as cards are added.

    cargo build --release -p finn_partitioner
    .venv/finn/bin/python bench/replicas/run.py --partitioner target/release/finn-partition \\
        [--estimates finn/partitioner/tests/data/mobilenet_v1_estimates.json] \\
        [--cards 1 2 4 8] --out-dir bench/replicas/results/mvau_rtl

The plot needs matplotlib (in the FINN environment, .venv/finn); without it only the table
and the JSON are written.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
# The U280's platform file, the one source of its totals and ports (the partitioner reads it).
U280 = os.path.join(ROOT, "toolchains/fpga_platforms/xilinx_u280_gen3x16_xdma_1_202211_1.toml")
DEFAULT_ESTIMATES = os.path.join(ROOT, "finn/partitioner/tests/data/mobilenet_v1_estimates.json")


def solve(partitioner, estimates, cards, tmp):
    """One run on `cards` chained U280s: (plan, solver seconds)."""
    devices = os.path.join(tmp, "devices_%d.json" % cards)
    with open(devices, "w") as f:
        json.dump({"devices": [{"name": "fpga%d" % i, "platform": U280, "clk_mhz": 250}
                               for i in range(cards)]}, f)
    topology = os.path.join(tmp, "chain.json")
    with open(topology, "w") as f:
        json.dump({"kind": "chain"}, f)
    plan_path = os.path.join(tmp, "plan_%d.json" % cards)
    timing = os.path.join(tmp, "timing_%d.json" % cards)
    proc = subprocess.run(
        [partitioner, "--estimates", estimates, "--devices", devices, "--topology", topology,
         "--objective", "throughput", "--replicas", "auto", "--out", plan_path,
         "--timing-out", timing],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise SystemExit("error: %d cards: finn-partition failed:\n%s" % (cards, proc.stderr))
    with open(plan_path) as f:
        plan = json.load(f)
    with open(timing) as f:
        seconds = json.load(f)["solver_seconds"]
    return plan, seconds


def row(cards, plan, seconds):
    copies = plan["replicas"]
    b = plan.get("binding") or {}
    return {
        "cards": cards,
        "fps_total": plan["fps_total"],
        "replicas": len(copies),
        "fps_per_replica": plan["fps"],
        "cut_replicas": sum(1 for r in copies if r["cuts"]),
        "cuts": sum(len(r["cuts"]) for r in copies),
        "binding": b,
        "max_utilization": max(max(d["utilization"][r] for r in ("LUT", "BRAM_18K", "URAM", "DSP"))
                               for d in plan["devices"]),
        "solver_seconds": seconds,
    }


def table(rows):
    out = ["| cards | FPS total | replicas | FPS / replica | cut replicas (cuts) | next replica bound by "
           "| max card util | solve s |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        b = r["binding"]
        bound = ("%s on %s at %s (%.1f %%)" % (b["resource"], b["device"], b["layer"],
                                                100 * b["utilization"]) if b else "-")
        out.append("| %d | %.0f | %d | %.1f | %d (%d) | %s | %.1f %% | %.2f |" % (
            r["cards"], r["fps_total"], r["replicas"], r["fps_per_replica"], r["cut_replicas"],
            r["cuts"], bound, 100 * r["max_utilization"], r["solver_seconds"]))
    return "\n".join(out) + "\n"


def plot(rows, figures, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("note: no matplotlib here, no plot (run with .venv/finn/bin/python)", file=sys.stderr)
        return False
    cards = [r["cards"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4))
    ax.plot(cards, [r["fps_total"] for r in rows], "o-", label="modelled, replicas auto")
    for r in rows:
        ax.annotate("%d copies" % r["replicas"], (r["cards"], r["fps_total"]),
                    textcoords="offset points", xytext=(4, -12), fontsize=8)
    edf = figures["elastic_df"]
    ax.plot([1, 1, 2], [edf["fps_1cu"], edf["fps_2cu_1card"], edf["fps_3cu_2cards"]], "s",
            label="Elastic-DF, measured")
    ax.plot([2], [figures["mobilenet_2fpga"]["fps"]], "^", label="AuroraFlow paper, measured")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(cards)
    ax.set_xticklabels([str(c) for c in cards])
    ax.set_xlabel("U280 cards (chain)")
    ax.set_ylabel("frames per second")
    ax.set_title("MobileNet-V1: total FPS with replicas (80 % budgets, 250 MHz)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=100)
    os.replace(tmp, path)
    return True


def write(path, text):
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--partitioner", required=True, help="finn-partition binary")
    ap.add_argument("--estimates", default=DEFAULT_ESTIMATES)
    ap.add_argument("--cards", type=int, nargs="+", default=[1, 2, 4, 8])
    ap.add_argument("--out-dir", required=True, help="for sweep.json and sweep.png")
    a = ap.parse_args(argv)
    with open(os.path.join(ROOT, "paper/figures.toml"), "rb") as f:
        figures = tomllib.load(f)
    rows = []
    with tempfile.TemporaryDirectory(prefix="replica-sweep-") as tmp:
        for n in a.cards:
            plan, seconds = solve(a.partitioner, a.estimates, n, tmp)
            rows.append(row(n, plan, seconds))
    os.makedirs(a.out_dir, exist_ok=True)
    print(table(rows), end="")
    write(os.path.join(a.out_dir, "sweep.json"), json.dumps(
        {"estimates": os.path.basename(a.estimates), "rows": rows}, indent=1) + "\n")
    plot(rows, figures, os.path.join(a.out_dir, "sweep.png"))
    falls = [(p["cards"], q["cards"]) for p, q in zip(rows, rows[1:]) if q["fps_total"] < p["fps_total"]]
    if falls:
        print("error: the total FPS falls from %d to %d cards" % falls[0], file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
