#!/usr/bin/env bash
# `infer` on a FINN deployment against FINN's own Python execution of the unpartitioned
# model: the images of the reference (finn/flow/exec_reference.py, case "unpartitioned
# model") go through the deployment's run script (every rank, the simulated devices and
# links), and the outputs must equal FINN's bit for bit; run.json must say the same, and the
# log may carry no note (a width converter left holding part of a word is an error).
# COUNTS "all" runs every image once; "1,2,3" runs `--images 1`, `--images 2`, ... (the first
# N images of the reference each time), every one checked the same way.
#
#   infer_matches_finn.sh NAME RUN_SCRIPT REFERENCE_DIR PYTHON CHECKER bad-input|no-bad-input COUNTS
set -euo pipefail
name=$1 run=$2 ref=$3 python=$4 checker=$5 bad=$6 counts=${7:-all}
# outputs kept in TEST_OUTPUT_DIR when given, else in a scratch directory removed on exit
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
out=${TEST_OUTPUT_DIR:-$scratch/out}
mkdir -p "$out"

read -r images outputs < <("$python" "$checker" files "$ref")
if [ "$counts" = all ]; then
    runs=(all)
else
    IFS=, read -r -a runs <<<"$counts"
fi
for n in "${runs[@]}"; do
    tag=$name.infer${n/#all/}
    log="$out/$tag.log"
    limit=()
    [ "$n" = all ] || limit=(--images "$n")
    status=0
    # --timeout-s: a rank's first words come after its simulated partition has taken the
    # first image through, which on a loaded 2-core CI machine took MobileNet's first half
    # more than the default 10 s without progress (aurora-host then reports the link dead).
    # This checks outputs; a dead or failing rank has its own tests (host/driver/tests/).
    timeout 600 bash "$run" local --timeout-s 60 infer --input "$ref/$images" "${limit[@]}" --out "$out/$tag" >"$log" 2>&1 || status=$?
    cat "$log"
    if [ "$status" -ne 0 ]; then
        echo "FAIL $name: infer ${limit[*]} exited $status (log: $log)"
        exit 1
    fi
    "$python" "$checker" compare "$ref/$outputs" "$out/$tag" "$log" "$n"
done

if [ "$bad" = bad-input ]; then
    wrong="$out/wrong_shape.npy"
    "$python" "$checker" wrong-shape "$ref/$images" "$wrong"
    status=0
    timeout 120 bash "$run" local infer --input "$wrong" --out "$out/$name.wrong" >"$out/wrong.log" 2>&1 || status=$?
    cat "$out/wrong.log"
    if [ "$status" -eq 0 ]; then
        echo "FAIL $name: infer accepted $wrong (wrong shape)"
        exit 1
    fi
    "$python" "$checker" wrong-shape-error "$ref/$images" "$wrong" "$out/wrong.log"
fi
