#!/usr/bin/env bash
# Illegal kernel parameters are rejected at elaboration by Verilator and by
# Yosys, each naming the parameter (lint itself: the verilator_lint targets).
# Tools come from their toolchains (hdl_script_test): $VERILATOR, $YOSYS.
set -euo pipefail
: "${VERILATOR:?set by hdl_script_test}" "${YOSYS:?set by hdl_script_test}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rtl=("$here"/../rtl/*.sv)
status=0
# illegal parameters must be rejected at elaboration, naming the parameter
for bad in "-GFIFO_WIDTH=48:FIFO_WIDTH" "-GRX_FIFO_SIZE=60000:RX_FIFO_SIZE" \
           "-GRX_FIFO_PROG_EMPTY=600:RX_FIFO_PROG_EMPTY" "-GUSE_FRAMING=2:USE_FRAMING" \
           "-GFIFO_WIDTH=32 -GRX_FIFO_SIZE=16384 -GCABLE_M=30 -GRX_FIFO_PROG_FULL=265:RX_FIFO_PROG_FULL=265 leaves a headroom of 247 link beats" \
           "-GFIFO_WIDTH=64 -GRX_FIFO_SIZE=8192:RX_FIFO_PROG_FULL=64 leaves a headroom of 128 link beats"; do
  arg="${bad%%:*}"; name="${bad##*:}"
  # shellcheck disable=SC2086
  if msg=$("$VERILATOR" --lint-only -Wall -DAURORA_SIM -I"$here/../rtl" $arg "${rtl[@]}" "$here"/model/*.sv \
             --top-module aurora_flow 2>&1); then
    echo "verilator: $arg was accepted; it must be rejected" >&2; status=1
  elif ! grep -q "aurora_flow: $name" <<<"$msg"; then
    echo "verilator: $arg rejected without naming $name:" >&2; echo "$msg" >&2; status=1
  fi
done
# Yosys (synthesis front end) must reject them the same way
for bad in "FIFO_WIDTH 48:FIFO_WIDTH" "RX_FIFO_PROG_EMPTY 600:RX_FIFO_PROG_EMPTY"; do
  arg="${bad%%:*}"; name="${bad##*:}"
  if msg=$("$YOSYS" -q -p "read_verilog -sv ${rtl[*]} $here/../synth/aurora_64b66b_0.sv;
             hierarchy -top aurora_flow -chparam $arg" 2>&1); then
    echo "yosys: $arg was accepted; it must be rejected" >&2; status=1
  elif ! grep -q "aurora_flow: $name" <<<"$msg"; then
    echo "yosys: $arg rejected without naming $name:" >&2; echo "$msg" >&2; status=1
  fi
done
[ $status -eq 0 ] && echo "parameter checks: ok"
exit $status
