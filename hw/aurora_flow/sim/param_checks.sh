#!/usr/bin/env bash
# Illegal kernel parameters are refused at elaboration by Verilator, Yosys and
# Icarus Verilog, each naming the parameter and, for the in-flight budget, the
# numbers (rtl/af_refuse.svh; lint itself: the verilator_lint targets). The
# project's own rules refusing them: hw/aurora_flow/desc/tests/kernel_params.rs.
# Tools come from their toolchains (hdl_script_test): $VERILATOR, $YOSYS, $IVERILOG.
set -euo pipefail
: "${VERILATOR:?set by hdl_script_test}" "${YOSYS:?set by hdl_script_test}"
: "${IVERILOG:?set by hdl_script_test}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# the package first: the modules import it, and the tools read files in order
rtl=("$here/../rtl/af_kernel_pkg.sv")
for f in "$here"/../rtl/*.sv; do [ "$f" -ef "${rtl[0]}" ] || rtl+=("$f"); done
status=0
# illegal parameters must be rejected at elaboration, naming the parameter
for bad in "-GFIFO_WIDTH=48:FIFO_WIDTH" "-GRX_FIFO_SIZE=60000:RX_FIFO_SIZE" \
           "-GRX_FIFO_PROG_EMPTY=600:RX_FIFO_PROG_EMPTY" "-GUSE_FRAMING=2:USE_FRAMING" \
           "-GFIFO_WIDTH=32 -GRX_FIFO_SIZE=16384 -GCABLE_M=30 -GRX_FIFO_PROG_FULL=265:RX_FIFO_PROG_FULL=265 leaves a headroom of 247 link beats" \
           "-GFIFO_WIDTH=64 -GRX_FIFO_SIZE=8192:RX_FIFO_PROG_FULL=64 leaves a headroom of 128 link beats ((depth 128 - prog_full 64) words x 64 B / 32 B), but CABLE_M=30 needs 248 (128 + 4 x 30 m)"; do
  arg="${bad%%:*}"; name="${bad##*:}"
  # shellcheck disable=SC2086
  if msg=$("$VERILATOR" --lint-only -Wall -DAURORA_SIM -I"$here/../rtl" $arg "${rtl[@]}" "$here"/model/*.sv \
             --top-module aurora_flow 2>&1); then
    echo "verilator: $arg was accepted; it must be rejected" >&2; status=1
  elif ! grep -qF "aurora_flow: $name" <<<"$msg"; then
    echo "verilator: $arg rejected without naming $name:" >&2; echo "$msg" >&2; status=1
  fi
done
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
# A flow that downgrades the elaboration $fatal (Verilator's -Wno-fatal without the rules'
# -Werror-USERFATAL) still builds a model of the lossy configuration; the refusing block's
# `initial $fatal` must stop it at time 0 with the same message, before any data moves.
lossy="-GFIFO_WIDTH=64 -GRX_FIFO_SIZE=8192"
lossy_msg="aurora_flow: RX_FIFO_PROG_FULL=64 leaves a headroom of 128 link beats ((depth 128 - prog_full 64) words x 64 B / 32 B), but CABLE_M=30 needs 248 (128 + 4 x 30 m): raise RX_FIFO_SIZE or lower RX_FIFO_PROG_FULL"
# shellcheck disable=SC2086
if ! msg=$("$VERILATOR" --binary --timing -Wno-fatal -DAURORA_SIM -I"$here/../rtl" $lossy \
             -Mdir "$work/lossy" "${rtl[@]}" "$here"/model/*.sv --top-module aurora_flow 2>&1); then
  echo "verilator -Wno-fatal: the lossy model must build (the elaboration check only warns):" >&2
  echo "$msg" >&2; status=1
elif ! grep -qF "%Warning-USERFATAL" <<<"$msg"; then
  echo "verilator -Wno-fatal: no USERFATAL warning for $lossy:" >&2; echo "$msg" >&2; status=1
elif msg=$(cd "$work" && timeout 120 "$work/lossy/Vaurora_flow" 2>&1); then
  echo "verilator -Wno-fatal: the lossy model ran to its end; it must stop at time 0:" >&2
  echo "$msg" >&2; status=1
elif ! grep -qF "[0] %Error: aurora_flow.sv:" <<<"$msg" || ! grep -qF "$lossy_msg" <<<"$msg"; then
  echo "verilator -Wno-fatal: the lossy model did not stop at time 0 with the message:" >&2
  echo "$msg" >&2; status=1
fi
# Yosys (synthesis front end) must reject them the same way, with the numbers
for bad in "-chparam FIFO_WIDTH 48:FIFO_WIDTH=48" "-chparam RX_FIFO_PROG_EMPTY 600:RX_FIFO_PROG_EMPTY=600" \
           "-chparam FIFO_WIDTH 64 -chparam RX_FIFO_SIZE 8192:RX_FIFO_PROG_FULL=64 leaves a headroom of 128 link beats ((depth 128 - prog_full 64) words x 64 B / 32 B), but CABLE_M=30 needs 248 (128 + 4 x 30 m)"; do
  arg="${bad%%:*}"; name="${bad#*:}"
  if msg=$("$YOSYS" -q -p "read_verilog -defer -sv ${rtl[*]} $here/../synth/aurora_64b66b_0.sv;
             hierarchy -top aurora_flow $arg" 2>&1); then
    echo "yosys: $arg was accepted; it must be rejected" >&2; status=1
  elif ! grep -qF "aurora_flow: $name" <<<"$msg"; then
    echo "yosys: $arg rejected without naming $name:" >&2; echo "$msg" >&2; status=1
  fi
done
# Icarus Verilog 11 has no elaboration tasks: its elaboration error names the refusing
# generate block, and the in-flight budget's scope path carries the numbers
icarus() {  # -P overrides...
  "$IVERILOG" -g2012 -DAURORA_SIM -I"$here/../rtl" -o "$work/k.vvp" -s aurora_flow "$@" \
    "${rtl[@]}" "$here"/model/*.sv 2>&1
}
if ! msg=$(icarus); then
  echo "icarus: the default configuration must elaborate:" >&2; echo "$msg" >&2; status=1
fi
for bad in "-Paurora_flow.FIFO_WIDTH=48:aurora_flow.g_err_fifo_width" \
           "-Paurora_flow.FIFO_WIDTH=64 -Paurora_flow.RX_FIFO_SIZE=8192:aurora_flow.g_err_headroom.RX_FIFO_SIZE_[8192].FIFO_WIDTH_[64].headroom_beats[128].need_beats[248]"; do
  arg="${bad%%:*}"; scope="${bad#*:}"
  # shellcheck disable=SC2086
  if msg=$(icarus $arg); then
    echo "icarus: $arg was accepted; it must be rejected" >&2; status=1
  elif ! grep -qF "aurora_flow_refuses_these_parameters' in \`$scope'" <<<"$msg"; then
    echo "icarus: $arg rejected without naming $scope:" >&2; echo "$msg" >&2; status=1
  fi
done
[ $status -eq 0 ] && echo "parameter checks: ok"
exit $status
