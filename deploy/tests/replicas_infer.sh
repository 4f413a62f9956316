#!/usr/bin/env bash
# `infer` on a replica deployment (mobilenet_2fpga_replicas, tiny_2fpga_replicas: one input
# and one output DMA per copy of the pipeline, a cut copy's on the cards of its first and last
# segment): as many random images as copies, round robin, so every copy gets
# exactly one. Expected from the topology the deployment wrote (its copies), not from infer:
# the copies line shows one image for each of the C copies, and all C outputs, back in input
# order, are bit-exact with the unpartitioned model (`whole/` of the executor export, itself
# checked against FINN by //finn/mobilenet_v1:exec_bitexact). The whole's figures: the
# modelled FPS of every copy together is the plan's fps_total (the partitioner's own sum), the
# simulated one within 0.5 % of it; beside them the
# AuroraFlow paper's and Elastic-DF's measured FPS as paper/figures.toml has them; run.json
# records the same whole and the run report shows it.
# From the test target's env: MIN_FPS, the floor of both whole figures (issue #34's 13,000
# for MobileNet; default 0), and MIN_CUT_COPIES, how many copies the topology must cut across
# cards (default 0), so a plan that stops cutting fails the test instead of passing on whole
# copies only; every cut's link must show its stream crossed (TX = RX beats > 0, no overflow).
#
#   replicas_infer.sh --deployment NAME TOPOLOGY REPORT JOB RUN BUNDLE
# env: TESTKIT_CHECK (tools/testkit/check: the topology's cut copies), PYTHON (the python
# toolchain, for the figures' check below)
set -euo pipefail
check=$(realpath "${TESTKIT_CHECK:?TESTKIT_CHECK: testkit-check (tools/testkit/check) must be given}")
if [ "${1:-}" != --deployment ] || [ $# -ne 7 ]; then
    echo "usage: $0 --deployment NAME TOPOLOGY REPORT JOB RUN BUNDLE" >&2
    exit 2
fi
name=$2 topology=$3 run=$6 bundle=$7
copies=$(grep -o '"dma_in_r[0-9]*"' "$topology" | sort -u | wc -l)
if [ "$copies" -lt 2 ]; then
    echo "FAIL $topology lists $copies copies; expected a replica deployment"
    exit 1
fi
cut=$("$check" topology cut-copies "$topology")
if [ "$cut" -lt "${MIN_CUT_COPIES:-0}" ]; then
    echo "FAIL $topology cuts $cut copies across cards; expected at least ${MIN_CUT_COPIES}"
    exit 1
fi
echo "ok   $cut of $copies copies cut across cards"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
log=$scratch/infer.log
if ! timeout 300 bash "$run" infer --images "$copies" --out "$scratch/out" >"$log" 2>&1; then
    echo "FAIL infer on $name exited non-zero:"
    cat "$log"
    exit 1
fi
ones=$(printf '1, %.0s' $(seq "$copies")) ones="[${ones%, }]"
fail=0
for want in "$copies copies, images per copy (round robin): $ones" \
    "bit-exact $copies/$copies with the unpartitioned reference"; do
    if grep -qF "$want" "$log"; then echo "ok   $want"; else echo "FAIL no line with: $want"; fail=1; fi
done
# The whole's figures against the plan, paper/figures.toml, run.json and the report.
if ! "${PYTHON:?PYTHON: the python toolchain must be given}" - "$log" "$bundle/finn/plan.json" paper/figures.toml "$scratch/out" "$copies" "${MIN_FPS:-0}" "$topology" <<'PY'; then fail=1; fi
import json, re, sys, tomllib
log, plan, figures, out, copies, min_fps = sys.argv[1:7]
min_fps = int(min_fps)
text = open(log).read()
total = json.load(open(plan))["fps_total"]
paper = tomllib.load(open(figures, "rb"))
bad = []
def ok(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        bad.append(what)
got = {}
for kind in ("modelled", "simulated"):
    m = re.search(rf"^{kind} whole: ([0-9]+) FPS \({copies} copies", text, re.M)
    ok(m is not None, f"a '{kind} whole' line for {copies} copies")
    got[kind] = int(m.group(1)) if m else 0
    ok(got[kind] >= min_fps, f"{kind} whole {got[kind]} FPS >= {min_fps} (MIN_FPS)")
ok(abs(got["modelled"] - total) <= 0.5, f"modelled whole {got['modelled']} = the plan's fps_total {total:.1f}")
ok(abs(got["simulated"] - total) <= 0.005 * total, f"simulated whole {got['simulated']} within 0.5 % of {total:.1f}")
e = paper["elastic_df"]
want = (f"beside: the paper {paper['mobilenet_2fpga']['fps']:.0f} FPS (MobileNet-V1, one pipeline over 2 × U280); "
        f"Elastic-DF {e['fps_1cu']:.0f} / {e['fps_2cu_1card']:.0f} / {e['fps_3cu_2cards']:.0f} FPS")
ok(want in text, f"the line '{want}'")
# every cut copy's stream crossed its cable: the link's TX and RX beats equal and not zero,
# none lost (the cable from the topology the deployment wrote, not from infer)
topo = json.load(open(sys.argv[7]))
for c in topo["replicas"]["copies"]:
    for cut in c["cuts"]:
        name = f"{cut['from']}->{cut['to']}"
        m = re.search(rf"^link {re.escape(name)}: TX ([0-9]+) beats, RX ([0-9]+) beats, .*overflow 0$", text, re.M)
        ok(m is not None and m.group(1) == m.group(2) and int(m.group(1)) > 0,
           f"copy {c['index']}'s cut {name}: TX = RX > 0 beats, no overflow ({m.group(0) if m else 'no line'})")
run = json.load(open(f"{out}/run.json"))
w = run.get("whole") or {}
ok(w.get("copies") == int(copies), f"run.json whole: {w.get('copies')} copies")
for kind in ("modelled", "simulated"):
    v = w.get(f"{kind}_fps", 0)
    ok(abs(v - got[kind]) <= 0.5, f"run.json whole {kind}_fps {v:.1f} = the printed {got[kind]}")
html = open(f"{out}/report.html").read()
rows = re.findall(r'data-quantity="fps-whole" data-source="([^"]+)"', html)
ok(sorted(rows) == sorted(["modelled", "simulated"] + ["Elastic-DF-measured"] * 3),
   f"report.html: the whole's rows {rows}")
sys.exit(1 if bad else 0)
PY
[ $fail = 0 ] || cat "$log"
exit $fail
