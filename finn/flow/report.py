#!/usr/bin/env python3
"""Render a partition plan: a text summary and a PNG with per-device utilisation bars
and the cuts between devices.

    report.py --plan plan.json --text report.txt --png report.png
"""

import argparse
import json
import os
import sys
import tomllib

# The paper's figures have one copy, which the run report compiles in too.
PAPER_FIGURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                             "paper", "figures.toml")
RESOURCES = ["LUT", "FF", "BRAM_18K", "URAM", "DSP"]


def paper_line():
    with open(PAPER_FIGURES, "rb") as f:
        m = tomllib.load(f)["mobilenet_2fpga"]
    clocks = "/".join(str(c) for c in m["clk_mhz"])
    return f"paper (2x U280 at {clocks} MHz, measured): {m['fps']} FPS, {m['latency_ms']} ms"


def text(plan):
    s = [f"model {plan['model']}  objective {plan['objective']}  topology {plan['topology']['kind']}",
         f"predicted {plan['fps']:.1f} FPS end to end (bottleneck {plan['bottleneck']})",
         f"  FINN's no-overlap estimate {plan['finn_no_overlap_latency_ms']:.3f} ms (the sum of every layer's "
         f"cycles, not a pipelined latency; a deployment's run report models and simulates that)",
         f"  vs {paper_line()}; inputs differ: random weights, this folding, estimated clocks",
         f"solver {plan['solver']['method']}, "
         f"optimal {plan['solver']['optimal']}, gap {plan['solver']['gap']:.4%}", ""]
    for d in plan["devices"]:
        util = "  ".join(f"{r} {d['utilization'][r] * 100:5.1f}%" for r in RESOURCES)
        s.append(f"{d['name']}: {len(d['layers']):3d} layers  {d['clk_mhz']:.0f} MHz  "
                 f"{d['fps']:9.1f} FPS  {util}")
    s.append("")
    for c in plan["cuts"]:
        s.append(f"cut {c['from_layer']} ({c['from_device']}) -> {c['to_layer']} ({c['to_device']}): "
                 f"{c['stream_bits']} bit stream, {c['bits_per_frame']} bit/frame, {c['gbps']:.2f} Gb/s")
    s += replica_lines(plan)
    s.append("(FF: FINN's analytic model has no FF estimate; only reserved link kernels count.)")
    return "\n".join(s) + "\n"


def replica_lines(plan):
    """A replica plan (`--replicas`): the copies, their total and what bounds one more;
    the device lines above then count every copy on a card."""
    if "replicas" not in plan:
        return []
    copies = plan["replicas"]
    s = ["", f"{len(copies)} replicas at {plan['fps']:.1f} FPS each: {plan['fps_total']:.1f} FPS in total"]
    b = plan.get("binding")
    if b:
        s.append(f"  one more replica is bound by {b['resource']} on {b['device']} "
                 f"({b['utilization'] * 100:.1f}% used) at layer {b['layer']}")
    for r in copies:
        where = " -> ".join(f"{g['device']} ({len(g['layers'])} layers)" for g in r["segments"])
        links = ", ".join(f"{c['from_device']}:{c['from_port']}->{c['to_device']}:{c['to_port']}"
                          for c in r["cuts"])
        s.append(f"  replica {r['index']}: {where}" + (f" over {links}" if links else ""))
    return s


def picture(plan, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    devs = plan["devices"]
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(9, 6), gridspec_kw={"height_ratios": [3, 1]})
    width = 0.8 / len(RESOURCES)
    for i, r in enumerate(RESOURCES):
        ax.bar([k + i * width for k in range(len(devs))], [d["utilization"][r] * 100 for d in devs],
               width, label=r)
    ax.set_xticks([k + 0.4 - width / 2 for k in range(len(devs))])
    ax.set_xticklabels([f"{d['name']}\n{d['fps']:.0f} FPS" for d in devs])
    ax.set_ylabel("utilisation %")
    ax.legend(ncol=5, fontsize=8)
    ax.set_title(f"{plan['model']}: {plan['fps']:.0f} FPS ({plan['objective']}, {plan['topology']['kind']})")
    # The pipeline as a strip of layers coloured by device, with the cuts marked.
    names = {d["name"]: k for k, d in enumerate(devs)}
    colors = [names[layer["device"]] for layer in plan["layers"]]
    ax2.imshow([colors], aspect="auto", cmap="tab10", vmin=0, vmax=9)
    order = {layer["name"]: k for k, layer in enumerate(plan["layers"])}
    for c in plan["cuts"]:
        x = order[c["to_layer"]] - 0.5
        ax2.axvline(x, color="black")
        ax2.text(x, -0.6, f"{c['gbps']:.1f} Gb/s", ha="center", fontsize=8)
    ax2.set_yticks([])
    ax2.set_xlabel("layers in dataflow order (colour = device, line = cut)")
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=100)
    os.replace(tmp, path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plan", required=True)
    ap.add_argument("--text", required=True)
    ap.add_argument("--png", required=True)
    a = ap.parse_args(argv)
    try:
        with open(a.plan) as f:
            plan = json.load(f)
    except (OSError, ValueError) as e:
        print(f"error: {a.plan}: cannot read plan: {e}", file=sys.stderr)
        return 3
    with open(a.text + ".tmp", "w") as f:
        f.write(text(plan))
    os.replace(a.text + ".tmp", a.text)
    picture(plan, a.png)
    return 0


if __name__ == "__main__":
    sys.exit(main())
