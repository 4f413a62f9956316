#!/usr/bin/env bash
# run_sim.sh BINARY [-- PLUSARGS...]...
# Runs a simulation binary once per `--`-separated plusarg set (two at a time)
# and fails if any run fails; a failing run's output (with its seed and
# cycle) is printed together with the command that replays it.
set -uo pipefail
bin=$1; shift
runs=(); cur=""
for a in "$@"; do
  if [ "$a" = "--" ]; then [ -n "$cur" ] && runs+=("$cur"); cur=""
  else cur="${cur:+$cur }$a"; fi
done
[ -n "$cur" ] && runs+=("$cur")
[ ${#runs[@]} -eq 0 ] && runs=("")
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
failed=0; pids=(); idx=()
finish() {  # $1 = position in pids
  local i=${idx[$1]}
  if wait "${pids[$1]}"; then grep -h '^RESULT' "$work/$i.log" || true
  else
    cat "$work/$i.log"
    echo "FAILED: $bin ${runs[$i]}"
    failed=1
  fi
}
for i in "${!runs[@]}"; do
  # shellcheck disable=SC2086
  "$bin" ${runs[$i]} >"$work/$i.log" 2>&1 &
  pids+=($!); idx+=("$i")
  if [ ${#pids[@]} -ge 2 ]; then
    finish 0; pids=("${pids[@]:1}"); idx=("${idx[@]:1}")
  fi
done
for j in "${!pids[@]}"; do finish "$j"; done
exit $failed
