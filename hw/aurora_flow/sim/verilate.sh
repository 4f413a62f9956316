#!/usr/bin/env bash
# Build one AuroraFlow testbench into a simulation binary with Verilator.
# Usage: verilate.sh OUT_BINARY TOP_MODULE [-Gparam=value ...]
# The RTL, the behavioural Aurora core and the testbench are compiled with
# AURORA_SIM defined; the object directory sits next to OUT_BINARY.
set -euo pipefail
if [ $# -lt 2 ]; then
  echo "usage: $0 OUT_BINARY TOP_MODULE [-Gparam=value ...]" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
out="$1"; top="$2"; shift 2
mdir="$out.obj"
if command -v ccache >/dev/null 2>&1; then export OBJCACHE=ccache; fi
mkdir -p "$mdir"
# -Wno-lint/-Wno-style: testbench code is not held to the RTL's lint rules
# (the RTL itself is linted with -Wall separately)
verilator --binary --timing -j 2 -Wno-fatal -Wno-lint -Wno-style \
  -DAURORA_SIM -I"$here/tb" --top-module "$top" "$@" \
  "$here"/../rtl/*.sv "$here"/model/*.sv "$here/tb/$top.sv" \
  --Mdir "$mdir" -o sim >"$mdir/build.log" 2>&1 || {
  cat "$mdir/build.log" >&2
  echo "verilate.sh: building $top failed (log above)" >&2
  exit 1
}
cp "$mdir/sim" "$out.tmp" && mv "$out.tmp" "$out"
