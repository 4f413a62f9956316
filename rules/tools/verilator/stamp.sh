#!/usr/bin/env bash
# stamp.sh OUT -- CMD [ARGS...]
# Runs CMD; on success writes its combined output to OUT (so a check such as
# `verilator --lint-only` becomes a cacheable build action with one output).
set -euo pipefail
out=$1; shift
[ "${1:-}" = "--" ] || { echo "stamp.sh: usage: OUT -- CMD [ARGS...]" >&2; exit 2; }
shift
log="$out.tmp.$$"
trap 'rm -f "$log"' EXIT
if ! "$@" >"$log" 2>&1; then
  cat "$log" >&2
  echo "error: \`$1\` failed (command above); fix the reported problem and rebuild" >&2
  exit 3
fi
mv "$log" "$out"
