#!/usr/bin/env bash
# build_model.sh [--runtime DIR | --runtime-only] OUT_DIR VERILATOR -- VERILATOR_ARGS...
# Runs VERILATOR (the command VerilatorToolchainInfo.verilator names) with
# --Mdir OUT_DIR (created here: buck2 only creates the parent of a declared
# output directory) and removes the files Verilator writes with timestamps,
# and keeps make from logging its absolute directory, so the output depends
# on the inputs only.
#
# Verilator compiles its runtime library (verilated.cpp, verilated_timing.cpp,
# verilated_threads.cpp: about 3.5 s of CPU) into every model it builds. The
# toolchain compiles it once (--runtime-only: OUT_DIR keeps the runtime objects
# and runtime.sig, the model settings they were compiled for), and each model
# built with --runtime DIR links those objects instead: make is told to take
# them as built (its --assume-old, passed by Verilator's own -MAKEFLAGS). A model
# whose generated makefiles ask for other settings (tracing, coverage, other
# runtime files or C++ flags) is built again without them, so a shared object
# never stands in for one compiled differently.
set -euo pipefail

runtime="" runtime_only=0
case "${1:-}" in
  --runtime) runtime=$2; shift 2 ;;
  --runtime-only) runtime_only=1; shift ;;
esac
out=$1; verilator=$2; shift 2
[ "${1:-}" = "--" ] || { echo "build_model.sh: usage: [--runtime DIR | --runtime-only] OUT_DIR VERILATOR -- VERILATOR_ARGS..." >&2; exit 2; }
shift
# Verilator's --build runs `make -C OUT_DIR`, which logs the absolute directory it enters:
# the log would name the checkout.
export MAKEFLAGS="--no-print-directory${MAKEFLAGS:+ $MAKEFLAGS}"

# signature DIR: what the runtime objects of the model in DIR are compiled with,
# read from the makefiles Verilator generated there (the scalar VM_ settings, the
# runtime files and the user's C++ flags; not the model's own names and files, nor
# VM_PARALLEL_BUILDS, which Verilator sets for large models and which only decides how
# the model's own files are compiled: verilated.mk compiles the runtime alike either way).
signature() {
  awk '
    /^VM_(PREFIX|MODPREFIX|PARALLEL_BUILDS) =/ { blk = ""; next }
    /^(VM_[A-Z0-9_]+|VERILATOR_ROOT) = [^\\]*$/ { blk = ""; print; next }
    /^VM_(GLOBAL_FAST|GLOBAL_SLOW|USER_CFLAGS|USER_LDLIBS) \+?= \\$/ { blk = $1; next }
    blk != "" && /^\t/ { print blk, $1; next }
    { blk = "" }
  ' "$1"/*.mk | LC_ALL=C sort
}

build() {
  rm -rf "$out"
  mkdir -p "$out"
  local make_args=()
  if [ -n "$runtime" ]; then
    for obj in "$runtime"/*.o; do
      cp "$obj" "$out/"
      make_args+=(-MAKEFLAGS "--assume-old=$(basename "$obj")")
    done
  fi
  if ! "$verilator" "$@" --Mdir "$out" "${make_args[@]}" >"$out/build.log" 2>&1; then
    cat "$out/build.log" >&2
    echo "error: $verilator failed building the model (log above)" >&2
    exit 3
  fi
}

build "$@"
if [ -n "$runtime" ] && [ "$(signature "$out")" != "$(cat "$runtime/runtime.sig")" ]; then
  echo "build_model.sh: this model's runtime settings differ from the shared runtime's; building its own" >&2
  runtime=""
  build "$@"
fi
if [ $runtime_only -eq 1 ]; then
  signature "$out" >"$out/runtime.sig.tmp"
  find "$out" -mindepth 1 -maxdepth 1 ! -name 'verilated*.o' ! -name runtime.sig.tmp -exec rm -rf {} +
  mv "$out/runtime.sig.tmp" "$out/runtime.sig"
  exit 0
fi
rm -f "$out"/*__verFiles.dat "$out"/*.d "$out"/*.o
