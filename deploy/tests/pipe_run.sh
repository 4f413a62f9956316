#!/usr/bin/env bash
# The guide's example (docs/guide-kernels.md) run as the guide runs it: `run.sh local
# --words N` starts apps/pipe/host on both simulated cards. Expected, from the description
# (deploy/pipe_2fpga.toml: producer_0 on fpga0 -> consumer_0 on fpga1 over the chain's
# fpga0:1 - fpga1:0 cable, producer_1 -> consumer_1 on fpga1) and not from the program:
# both consumers' buffers equal the input ("equal: yes" twice), fpga0's port 1 sent and
# fpga1's port 0 received N/8 link words (8 producer words of 64 bits per 512-bit beat),
# the unused direction carried none, no RX FIFO overflowed. The same again with
# `--backend xrt-sim` (the XRT backend the cluster's job uses, over simulated cards). Then a
# word count that is not a multiple of 8 must be refused by name.
#
#   pipe_run.sh --deployment NAME TOPOLOGY REPORT JOB RUN BUNDLE
set -euo pipefail
if [ "${1:-}" != --deployment ] || [ $# -ne 7 ]; then
    echo "usage: $0 --deployment NAME TOPOLOGY REPORT JOB RUN BUNDLE" >&2
    exit 2
fi
run=$6
words=4096
beats=$((words / 8))
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
out=${TEST_OUTPUT_DIR:-$scratch}
fail=0
check() { # check DESCRIPTION GREP-PATTERN (in $log)
    if grep -Eq "$2" "$log"; then echo "ok   $1"; else echo "FAIL $1 (no line matching: $2)"; fail=1; fi
}

for backend in sim xrt-sim; do
    log=$out/pipe_run.$backend.log
    if ! timeout 300 bash "$run" local --backend "$backend" --words "$words" >"$log" 2>&1; then
        echo "FAIL $backend: run.sh local --backend $backend --words $words exited non-zero:"
        cat "$log"
        fail=1
        continue
    fi
    before=$fail
    check "$backend: cable pipe arrived whole" "^fpga0\.producer_0 -> fpga1\.consumer_0 \(cable\): $((words * 8)) bytes, equal: yes$"
    check "$backend: on-card pipe arrived whole" "^fpga1\.producer_1 -> fpga1\.consumer_1 \(on card\): $((words * 8)) bytes, equal: yes$"
    check "$backend: fpga0 port 1 sent $beats link words" "^fpga0 port 1: tx_count $beats rx_count 0 "
    check "$backend: fpga1 port 0 received $beats link words" "^fpga1 port 0: tx_count 0 rx_count $beats "
    if grep -E 'fifo_rx_overflow [1-9]' "$log"; then echo "FAIL $backend: an RX FIFO overflowed"; fail=1; fi
    [ $fail -eq "$before" ] || { echo "--- run.sh output ($backend):"; cat "$log"; }
done

bad=$out/pipe_run_bad.log
if timeout 120 bash "$run" local --words 12 >"$bad" 2>&1; then
    echo "FAIL --words 12 was accepted"; fail=1
elif grep -q -- '--words 12: must be a positive multiple of 8' "$bad"; then
    echo "ok   --words 12 refused by name"
else
    echo "FAIL --words 12 refused without saying why:"; cat "$bad"; fail=1
fi
exit $fail
