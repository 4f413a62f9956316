#!/usr/bin/env bash
# Run the AuroraFlow simulation suite: lint, then every test of tests.txt
# (build the testbench with Verilator, run each plusarg set; two runs at a
# time). A failing run prints its seed and cycle and its plusargs; replay it
# with `sim/verilate.sh OUT TB PARAMS` and `OUT PLUSARGS`.
# Usage: hw/aurora_flow/sim/run_tests.sh [-k BUILD_DIR] [-s SCALE] [TEST ...]
#   -s SCALE   divide the +beats= of every run by SCALE (quick local runs)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
build=""; scale=1
while getopts "k:s:" opt; do
  case $opt in
    k) build="$OPTARG" ;;
    s) scale="$OPTARG" ;;
    *) echo "usage: $0 [-k BUILD_DIR] [-s SCALE] [TEST ...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
if [ -z "$build" ]; then build="$(mktemp -d)"; trap 'rm -rf "$build"' EXIT; fi
mkdir -p "$build"
only=" $* "
trim() { sed -e 's/^ *//' -e 's/ *$//' <<<"$1"; }
failed=0

"$here/lint.sh" || failed=1
"$here/../tcl/check_render.sh" || failed=1
if [ -z "$(trim "${only:-}")" ]; then "$here/icarus_check.sh" || failed=1; fi

while IFS='|' read -r name tb params runs; do
  name="$(trim "$name")"
  case "$name" in ''|'#'*) continue ;; esac
  if [ -n "$(trim "$only")" ] && [[ "$only" != *" $name "* ]]; then continue; fi
  tb="$(trim "$tb")"; params="$(trim "$params")"
  start=$(date +%s)
  # shellcheck disable=SC2086
  if ! "$here/verilate.sh" "$build/$name" "$tb" $params; then
    echo "FAIL $name: build"; failed=1; continue
  fi
  IFS=';' read -ra sets <<<"$runs"
  pids=(); logs=(); args=()
  i=0
  for set in "${sets[@]}"; do
    set="$(trim "$set")"
    if [ "$scale" != 1 ]; then
      set="$(awk -v s="$scale" '{for (i = 1; i <= NF; i++) if ($i ~ /^\+beats=/) {split($i, a, "="); $i = "+beats=" int(a[2] / s)}; print}' <<<"$set")"
    fi
    log="$build/$name.$i.log"
    # shellcheck disable=SC2086
    "$build/$name" $set >"$log" 2>&1 &
    pids+=($!); logs+=("$log"); args+=("$set")
    i=$((i + 1))
    if [ ${#pids[@]} -ge 2 ]; then
      wait "${pids[0]}" && rc=0 || rc=$?
      if [ $rc -ne 0 ]; then echo "FAIL $name ${args[0]}"; cat "${logs[0]}"; failed=1; fi
      grep -h '^RESULT' "${logs[0]}" || true
      pids=("${pids[@]:1}"); logs=("${logs[@]:1}"); args=("${args[@]:1}")
    fi
  done
  for j in "${!pids[@]}"; do
    wait "${pids[$j]}" && rc=0 || rc=$?
    if [ $rc -ne 0 ]; then echo "FAIL $name ${args[$j]}"; cat "${logs[$j]}"; failed=1; fi
    grep -h '^RESULT' "${logs[$j]}" || true
  done
  echo "done $name ($(( $(date +%s) - start )) s)"
done <"$here/tests.txt"

if [ $failed -ne 0 ]; then
  echo "aurora_flow simulation suite: FAILED (replay a run: sim/verilate.sh OUT TB PARAMS; OUT +seed=N ...)"
  exit 1
fi
echo "aurora_flow simulation suite: all passed"
