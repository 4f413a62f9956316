#!/usr/bin/env bash
# The jacobi ring through its run script (the host program under mpirun, one rank per
# simulated card, the halo rows over the emulated AuroraFlow links):
#  1. two grid sizes and iteration counts, each bit-exact against the whole-grid reference,
#     every port sending and receiving exactly one row of 512-bit words per iteration (the
#     kernel's exchange: columns / 16 words each way), no overflow, no frame error;
#  2. fpga1 as a slow consumer (--throttle-us on its rank only): its neighbours run an
#     iteration ahead, its RX FIFOs fill past XOFF and drain to XON (both counted on its
#     ports), no word lost, still bit-exact;
#  3. a width the kernel cannot take, and a throttle on a device the deployment does not
#     have, are refused before any card starts.
#
#   jacobi_runs.sh --deployment NAME TOPOLOGY REPORT JOB RUN BUNDLE
# env: PYTHON (the python toolchain, for the run's JSON below)
set -euo pipefail
: "${PYTHON:?PYTHON: the python toolchain must be given}"
if [ $# -ne 7 ] || [ "$1" != --deployment ]; then
    echo "usage: $0 --deployment NAME TOPOLOGY REPORT JOB RUN BUNDLE (the jacobi deployment)" >&2
    exit 2
fi
name=$2 run=$6
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail=0

# check LABEL JSON COLS ITERATIONS THROTTLED: the run's JSON against what the run must show.
check() {
    "$PYTHON" - "$@" <<'PY'
import json, sys
label, path, cols, iterations, throttled = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
o = json.load(open(path))
bad = []
if not o["bit_exact"] or o["mismatches"] != 0:
    bad.append(f"not bit-exact: {o['mismatches']} cells differ, first {o['first_mismatch']}")
words = iterations * cols // 16  # one row of 16-cell (512-bit) words per direction and iteration
ports = [(c["device"], p) for c in o["per_card"] for p in c["ports"]]
if len(o["per_card"]) != 4 or len(ports) != 8:
    bad.append(f"{len(o['per_card'])} cards and {len(ports)} ports reported, want 4 and 8")
for dev, p in ports:
    if (p["tx_words"], p["rx_words"]) != (words, words):
        bad.append(f"{dev} port {p['port']}: tx {p['tx_words']} rx {p['rx_words']} words, want {words} each")
    if p["rx_overflow"] or p["tx_overflow"] or p["frames_with_errors"]:
        bad.append(f"{dev} port {p['port']}: overflow rx {p['rx_overflow']} tx {p['tx_overflow']}, frames with errors {p['frames_with_errors']}")
slow = [(dev, p) for dev, p in ports if dev == throttled]
if throttled != "-":
    for dev, p in slow:
        if p["xoff"] < 1 or p["xon"] < 1:
            bad.append(f"{dev} port {p['port']} (throttled): XOFF {p['xoff']} XON {p['xon']}, want both > 0")
flow = ", ".join(f"{dev}:{p['port']} XOFF {p['xoff']} XON {p['xon']}" for dev, p in ports if p["xoff"])
for b in bad:
    print(f"FAIL {label}: {b}")
if not bad:
    print(f"ok   {label}: bit-exact ({o['cells']} cells), {words} words each way on all 8 ports, "
          f"no overflow; flow control: {flow or 'none'}")
sys.exit(1 if bad else 0)
PY
}

# jacobi LABEL ROWS COLS ITERATIONS THROTTLED [DEPLOYMENT-OPTIONS...]: one run through the
# run script, then check.
jacobi() {
    local label=$1 rows=$2 cols=$3 iterations=$4 throttled=$5 log json
    shift 5
    log=$scratch/$label.log json=$scratch/$label.json
    if ! bash "$run" local "$@" run --rows "$rows" --cols "$cols" --iterations "$iterations" \
        --json "$json" >"$log" 2>&1; then
        echo "FAIL $label: the run failed:"; cat "$log"; return 1
    fi
    grep -q '^bit-exact: yes' "$log" || { echo "FAIL $label: no 'bit-exact: yes' line:"; cat "$log"; return 1; }
    check "$name $label" "$json" "$cols" "$iterations" "$throttled" || { cat "$log"; return 1; }
}

jacobi "16x64x10" 16 64 10 - || fail=1
jacobi "5x96x7" 5 96 7 - || fail=1
# 32 KiB rows: an iteration ahead, two rows wait for the slow reader, more than XOFF's level
jacobi "throttled" 1 8192 5 fpga1 --throttle-us 20000 --throttle-device fpga1 || fail=1

if bash "$run" local run --rows 4 --cols 24 --iterations 1 >"$scratch/bad.log" 2>&1; then
    echo "FAIL bad width: --cols 24 ran"; fail=1
elif grep -q -- '--cols 24: the kernel takes a positive multiple of 16 cells' "$scratch/bad.log"; then
    echo "ok   bad width: --cols 24 refused: $(grep -o -- '--cols 24: [^(]*' "$scratch/bad.log" | head -1)"
else
    echo "FAIL bad width: --cols 24 failed without naming the columns:"; cat "$scratch/bad.log"; fail=1
fi
if bash "$run" local --throttle-us 10 --throttle-device fpga9 run --rows 1 --cols 16 --iterations 1 \
    >"$scratch/bad_device.log" 2>&1; then
    echo "FAIL bad device: --throttle-device fpga9 ran"; fail=1
elif grep -q -- '--throttle-device fpga9: the deployment has no such device (it has fpga0, fpga1, fpga2, fpga3)' "$scratch/bad_device.log"; then
    echo "ok   bad device: --throttle-device fpga9 refused naming the deployment's devices"
else
    echo "FAIL bad device: --throttle-device fpga9 failed without naming the devices:"; cat "$scratch/bad_device.log"; fail=1
fi
exit $fail
