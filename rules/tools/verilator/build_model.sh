#!/usr/bin/env bash
# build_model.sh OUT_DIR VERILATOR -- VERILATOR_ARGS...
# Runs VERILATOR (the command VerilatorToolchainInfo.verilator names) with
# --Mdir OUT_DIR (created here: buck2 only creates the parent of a declared
# output directory) and removes the files Verilator writes with timestamps,
# and keeps make from logging its absolute directory, so the output depends
# on the inputs only.
set -euo pipefail
out=$1; verilator=$2; shift 2
[ "${1:-}" = "--" ] || { echo "build_model.sh: usage: OUT_DIR VERILATOR -- VERILATOR_ARGS..." >&2; exit 2; }
shift
mkdir -p "$out"
# Verilator's --build runs `make -C OUT_DIR`, which logs the absolute directory it enters:
# the log would name the checkout.
export MAKEFLAGS="--no-print-directory${MAKEFLAGS:+ $MAKEFLAGS}"
if ! "$verilator" "$@" --Mdir "$out" >"$out/build.log" 2>&1; then
  cat "$out/build.log" >&2
  echo "error: $verilator failed building the model (log above)" >&2
  exit 3
fi
rm -f "$out"/*__verFiles.dat "$out"/*.d "$out"/*.o
