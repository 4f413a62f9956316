#!/usr/bin/env bash
# The host driver makes the same device calls on the simulated devices (--backend sim) and
# on its XRT backend over simulated cards (--backend xrt-sim: the kernels' arguments bound
# by the xclbin's metadata as XRT's own parser reads it, buffers in XRT memory groups, run
# states, the calls a card gets). Per deployment, `infer` runs on both through the run
# script; each rank's buffer and kernel calls are recorded at the device interface
# (--record-calls) and must be the same sequence (allocations, writes with their digests,
# starts with their arguments, waits, reads with their digests), and both runs must agree
# bit for bit with the unpartitioned reference. A link deployment runs `reset-counters`
# (its register writes recorded and compared) and `status`, whose report of every CU and
# link (registers read through the same interface) must be the same on both; then a small
# `bench throughput` and `bench latency` run on both with their calls recorded: the same
# sequence (buffers in the link configuration's banks, the pattern written with its digest,
# every recv started before any send with the same arguments, the waits, the read-backs),
# and every CSV row of both with byte_errors 0.
#
#   backends_agree.sh --deployment NAME TOPOLOGY REPORT JOB RUN BUNDLE [...]
# env: TESTKIT_CHECK (tools/testkit/check: topology, bench CSVs)
set -euo pipefail
check=$(realpath "${TESTKIT_CHECK:?TESTKIT_CHECK: testkit-check (tools/testkit/check) must be given}")
# outputs kept in TEST_OUTPUT_DIR when given, else in a scratch directory removed on exit
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
out=${TEST_OUTPUT_DIR:-$scratch/out}
mkdir -p "$out"
out=$(cd "$out" && pwd)
images=5
fail=0
while [ $# -gt 0 ]; do
    [ "$1" = --deployment ] || { echo "usage: $0 --deployment NAME TOPOLOGY REPORT JOB RUN BUNDLE ..." >&2; exit 2; }
    name=$2 topology=$3 run=$6
    shift 7
    ok=1
    app=$("$check" topology app "$topology")
    if [ "$app" != Finn ] && [ "$app" != finn ]; then
        for backend in sim xrt-sim; do
            calls="$out/$name.$backend.calls"
            rm -rf "$calls"
            if ! bash "$run" local --backend "$backend" --record-calls "$calls" reset-counters >"$out/$name.$backend.reset.log" 2>&1 ||
                ! bash "$run" local --backend "$backend" status >"$out/$name.$backend.status.log" 2>&1; then
                echo "FAIL $name: reset-counters / status --backend $backend failed:"; cat "$out/$name.$backend".*.log; ok=0
            fi
            # the report without its header lines (they name the backend's device)
            grep -E '^(   |-- )' "$out/$name.$backend.status.log" >"$out/$name.$backend.status" || true
        done
        if [ $ok -eq 1 ]; then
            for sim in "$out/$name.sim.calls"/rank*.calls; do
                diff -u "$sim" "$out/$name.xrt-sim.calls/$(basename "$sim")" ||
                    { echo "FAIL $name: $(basename "$sim" .calls): reset-counters' calls differ"; ok=0; }
                grep -q '^write_register aurora_flow_[0-9]* 0x14 = 0x1$' "$sim" ||
                    { echo "FAIL $name: no COUNTER_RESET write recorded in $sim"; ok=0; }
            done
            diff -u "$out/$name.sim.status" "$out/$name.xrt-sim.status" ||
                { echo "FAIL $name: status differs (above: - sim, + xrt-sim)"; ok=0; }
            up=$(grep -c 'CORE_STATUS *0x11ff' "$out/$name.xrt-sim.status" || true)
            [ "$up" -ge 2 ] || { echo "FAIL $name: xrt-sim status shows $up link ends up"; ok=0; }
            [ $ok -eq 1 ] && echo "ok   $name: reset-counters' calls and status ($(wc -l <"$out/$name.sim.status") lines, $up link ends up) the same on sim and xrt-sim"
        fi
        for mode in throughput latency; do
            case $mode in
            throughput) bench_args=(--max-bytes 4096 --iterations 50) ;;
            latency) bench_args=(--max-bytes 4096 --iterations 4) ;;
            esac
            for backend in sim xrt-sim; do
                calls="$out/$name.$backend.bench-$mode.calls" csv="$out/$name.$backend.bench-$mode.csv"
                rm -rf "$calls"
                if ! bash "$run" local --backend "$backend" --record-calls "$calls" bench "$mode" "${bench_args[@]}" --csv "$csv" \
                    >"$out/$name.$backend.bench-$mode.log" 2>&1; then
                    echo "FAIL $name: bench $mode --backend $backend failed:"; cat "$out/$name.$backend.bench-$mode.log"; ok=0; continue
                fi
                bad=$("$check" csv-errors "$csv" 2>&1) ||
                    { echo "FAIL $name: bench $mode --backend $backend: byte errors (or no rows) in $csv:"; echo "$bad"; ok=0; }
            done
            [ $ok -eq 1 ] || continue
            n=0
            for sim in "$out/$name.sim.bench-$mode.calls"/rank*.calls; do
                diff -u "$sim" "$out/$name.xrt-sim.bench-$mode.calls/$(basename "$sim")" ||
                    { echo "FAIL $name: $(basename "$sim" .calls): bench $mode's calls differ (above: - sim, + xrt-sim)"; ok=0; }
                n=$((n + $(wc -l <"$sim")))
                # the first transfer: both receivers started before either sender
                first=$(grep -E '^start run#[0-3] ' "$sim" | sed -E 's/^start run#[0-9]+ ([a-z]+)_.*/\1/' | tr '\n' ' ')
                [ "$first" = "recv recv send send " ] ||
                    { echo "FAIL $name: $(basename "$sim" .calls): bench $mode's first starts are '$first', not recv, recv, send, send"; ok=0; }
                for want in '^alloc buffer#[0-9]* [0-9]* B in HBM\[' '^write buffer#[0-9]* at 0: ' '^wait run#' '^read buffer#[0-9]* at 0: '; do
                    grep -q "$want" "$sim" || { echo "FAIL $name: bench $mode: no call matching '$want' in $sim"; ok=0; }
                done
            done
            [ $ok -eq 1 ] && echo "ok   $name: bench $mode: $n device calls the same on sim and xrt-sim, byte_errors 0 on both"
        done
        [ $ok -eq 1 ] || fail=1
        continue
    fi
    for backend in sim xrt-sim; do
        calls="$out/$name.$backend.calls" log="$out/$name.$backend.log"
        rm -rf "$calls"
        if ! bash "$run" local --backend "$backend" --record-calls "$calls" \
            infer --images "$images" --out "$out/$name.$backend.infer" >"$log" 2>&1; then
            echo "FAIL $name: infer --backend $backend failed:"; cat "$log"; ok=0; continue
        fi
        if ! grep -q "bit-exact $images/$images with the unpartitioned reference" "$log"; then
            echo "FAIL $name: infer --backend $backend is not bit-exact on $images images:"; cat "$log"; ok=0
        fi
    done
    if [ $ok -eq 1 ]; then
        ranks=0
        for sim in "$out/$name.sim.calls"/rank*.calls; do
            xrt="$out/$name.xrt-sim.calls/$(basename "$sim")"
            ranks=$((ranks + 1))
            if ! diff -u "$sim" "$xrt"; then
                echo "FAIL $name: $(basename "$sim" .calls): the backends' device calls differ (above: - sim, + xrt-sim)"; ok=0
            fi
        done
        all=$(cat "$out/$name.sim.calls"/rank*.calls)
        # the sequence holds the whole run: input DMA written and started, output read back
        for want in '^alloc buffer#0 [0-9]* B in HBM\[' '^write buffer#[0-9]* at 0: ' '^start run#[0-9]* dma_in_[0-9]*(mem=buffer#[0-9]*, out=stream, size=[0-9]*)$' \
            '^start run#[0-9]* dma_out_[0-9]*(in=stream, mem=buffer#[0-9]*, size=[0-9]*)$' '^begin_free_running finn_' '^wait run#' '^read buffer#[0-9]* at 0: '; do
            grep -q "$want" <<<"$all" || { echo "FAIL $name: no call matching '$want' recorded"; ok=0; }
        done
        if ! cmp -s "$out/$name.sim.infer/outputs.npy" "$out/$name.xrt-sim.infer/outputs.npy"; then
            echo "FAIL $name: the backends' outputs.npy differ"; ok=0
        fi
        [ $ok -eq 1 ] && echo "ok   $name: $ranks rank(s), $(wc -l <<<"$all") device calls the same on sim and xrt-sim, bit-exact $images/$images on both"
    fi
    [ $ok -eq 1 ] || fail=1
done
exit $fail
