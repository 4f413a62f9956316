#!/usr/bin/env bash
# Area estimate of the AuroraFlow kernel (without the Aurora core, which is a
# black box here) with Yosys synth_xilinx for UltraScale+ (xcup), for the
# streaming and the framing configuration at the default FIFO sizes.
# Usage: hw/aurora_flow/synth/area.sh [OUT_DIR]   (prints a Markdown table)
set -euo pipefail
: "${YOSYS:?set by hdl_script_binary}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
rtl="$here/../rtl"
# the logs and stat files: kept in OUT_DIR when given, else removed on exit
if [ -n "${1:-}" ]; then
  out=$1
else
  out="$(mktemp -d)"
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
srcs=(af_kernel_pkg af_sync af_reset_sync af_async_fifo af_axis_upsize af_axis_downsize af_nfc
      af_cdc_bundle af_link_monitor af_axil_regs af_ip_reset aurora_ip_if aurora_flow)
files=()
for s in "${srcs[@]}"; do files+=("$rtl/$s.sv"); done
files+=("$here/aurora_64b66b_0.sv")

run() {  # name framing width
  local name=$1 framing=$2 width=$3
  "$YOSYS" -q -l "$out/$name.log" -p "read_verilog -sv ${files[*]};
    chparam -set USE_FRAMING $framing -set FIFO_WIDTH $width aurora_flow;
    synth_xilinx -family xcup -top aurora_flow -flatten -noiopad;
    tee -o $out/$name.stat stat" >/dev/null 2>>"$out/$name.err"
}

count() {  # stat-file cell-regex -> sum of matching cell counts
  awk -v re="$2" '$1 ~ re && $2 ~ /^[0-9]+$/ {s += $2} END {print s + 0}' "$1"
}

printf '| configuration | LUT | FF | BRAM (36 Kb equiv.) | RAMB36E2 | RAMB18E2 | LUTRAM cells | INV |\n|---|---|---|---|---|---|---|---|\n'
for cfg in "streaming 0 64" "framing 1 64" "streaming_w32 0 32"; do
  # shellcheck disable=SC2086 # split the configuration into its three words
  set -- $cfg
  run "$1" "$2" "$3"
  st="$out/$1.stat"
  luts=$(count "$st" '^LUT[1-6]$')
  ffs=$(count "$st" '^FD(RE|SE|CE|PE|C|P|R|S)$')
  b36=$(count "$st" '^RAMB36E2$')
  b18=$(count "$st" '^RAMB18E2$')
  lram=$(count "$st" '^RAM(32|64|128|256)[MX]')
  inv=$(count "$st" '^INV$')
  bram=$(awk -v a="$b36" -v b="$b18" 'BEGIN {printf "%g", a + b / 2}')
  printf '| %s (FIFO_WIDTH=%s) | %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$3" "$luts" "$ffs" "$bram" "$b36" "$b18" "$lram" "$inv"
done
