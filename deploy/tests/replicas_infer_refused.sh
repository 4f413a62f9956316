#!/usr/bin/env bash
# A replica deployment (mobilenet_2fpga_replicas: one input DMA per copy) through `infer`,
# which feeds one copy only so far (docs/limits.md, "Replicas"): the run must end non-zero
# with the message naming the copies, not stall on the copies nobody feeds.
#
#   replicas_infer_refused.sh --deployment NAME TOPOLOGY REPORT JOB RUN BUNDLE
set -euo pipefail
if [ "${1:-}" != --deployment ] || [ $# -ne 7 ]; then
    echo "usage: $0 --deployment NAME TOPOLOGY REPORT JOB RUN BUNDLE" >&2
    exit 2
fi
name=$2 topology=$3 run=$6
# the number of copies, from the topology the deployment wrote (its replica plan's copies)
copies=$(grep -o '"dma_in_r[0-9]*"' "$topology" | sort -u | wc -l)
if [ "$copies" -lt 2 ]; then
    echo "FAIL $topology lists $copies copies; expected a replica deployment"
    exit 1
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if timeout 300 bash "$run" infer --images 1 >"$log" 2>&1; then
    echo "FAIL infer on $name succeeded, but it cannot feed $copies copies:"
    cat "$log"
    exit 1
fi
want="infer: deployment $name has $copies copies of the pipeline"
if ! grep -qF "$want" "$log"; then
    echo "FAIL no line with: $want"
    cat "$log"
    exit 1
fi
echo "ok   infer refuses $name's $copies copies by name"
