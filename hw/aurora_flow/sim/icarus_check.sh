#!/usr/bin/env bash
# Second simulator: build the full-rate streaming testbench with Icarus
# Verilog and check it passes there too (same data, rate and latency checks),
# so the results do not rest on Verilator's scheduling alone.
# Usage: icarus_check.sh [BEATS]
set -euo pipefail
: "${IVERILOG:?set by hdl_script_test}" "${VVP:?set by hdl_script_test}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
beats="${1:-3000}"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
# the package first: the modules import it, and the tools read files in order
rtl=("$here/../rtl/af_kernel_pkg.sv")
for f in "$here"/../rtl/*.sv; do [ "$f" -ef "${rtl[0]}" ] || rtl+=("$f"); done
"$IVERILOG" -g2012 -DAURORA_SIM -I"$here/tb" -I"$here/../rtl" -o "$work/tb.vvp" -s tb_stream_rate \
  "${rtl[@]}" "$here"/model/*.sv "$here/tb/tb_stream_rate.sv" 2>"$work/build.log" || {
  cat "$work/build.log" >&2; echo "icarus: build failed" >&2; exit 1; }
# $fatal ends vvp with status 1 (`-n`: no interactive stop)
"$VVP" -n "$work/tb.vvp" +ap_mhz=250 +beats="$beats" | tee "$work/run.log" | grep -E '^(RESULT|FAIL)'
grep -q '^RESULT' "$work/run.log" && ! grep -q '^FAIL' "$work/run.log"
