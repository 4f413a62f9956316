#!/usr/bin/env bash
# Remote execution's scaling over Slurm workers: the same 8 stand-in place & route actions
# of T seconds (remote/standin/defs.bzl) built with -c ci.remote_exec=true over 1, 2 and 4
# workers submitted through //remote:workers to a one-node Slurm cluster (remote/tests/
# pool.sh), each against the ideal ceil(8/N) x T, and the peer: the same actions built
# locally with forge's default -j (this machine's cores). Each round's actions have inputs
# of their own (the netlist names the round), so no round is served from the action cache.
#
#   ./forge run //bench/remote_scaling:run -- [--seconds T] [--actions N] [--workers "1 2 4"]
set -euo pipefail
# shellcheck source=remote/tests/pool.sh
source "$(dirname "${BASH_SOURCE[0]}")/../../remote/tests/pool.sh"
pool_args "$@"
T=3 ACTIONS=8 COUNTS="1 2 4"
set -- "${POOL_REST[@]}"
while [ $# -gt 0 ]; do
    case $1 in
        --seconds) T=$2; shift 2 ;;
        --actions) ACTIONS=$2; shift 2 ;;
        --workers) COUNTS=$2; shift 2 ;;
        *) echo "usage: run.sh [--seconds T] [--actions N] [--workers \"1 2 4\"]" >&2; exit 2 ;;
    esac
done

# A project whose actions no other round shares.
round() {
    local dir=$1 remote_exec=$2
    standin_project "$dir" "$remote_exec" "$ACTIONS" "$T"
    echo "round $(basename "$dir")" >>"$dir/pkg/netlist.txt"
}

ideal() { awk -v n="$ACTIONS" -v w="$1" -v t="$T" 'BEGIN { printf "%.2f", int((n + w - 1) / w) * t }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

pool_up
round "$POOL_WORK/local" false
standin_build "$POOL_WORK/local" "$(nproc)"
grep -q "remote: 0, local: $ACTIONS" "$POOL_WORK/local.log" || pool_fail "the local peer did not run $ACTIONS actions locally"
local_wall=$BUILD_WALL
rows=()
for n in $COUNTS; do
    pool_submit "$n"
    round "$POOL_WORK/remote-$n" true
    standin_build "$POOL_WORK/remote-$n" "$ACTIONS"
    grep -q "remote: $ACTIONS, local: 0" "$POOL_WORK/remote-$n.log" || pool_fail "$n worker(s): not every action ran remotely"
    [ "$(pool_leases)" -eq "$ACTIONS" ] || pool_fail "$n worker(s): the workers ran $(pool_leases) leases, want $ACTIONS"
    rows+=("| $n | $(ideal "$n") s | $BUILD_WALL s | $(ratio "$BUILD_WALL" "$(ideal "$n")")x | $(ratio "$BUILD_WALL" "$local_wall")x |")
    pool_cancel
done
echo "$ACTIONS stand-in actions of ${T}s; local peer (forge -j$(nproc), no remote execution): ${local_wall}s; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "| workers | ideal ceil($ACTIONS/N) x T | wall | wall / ideal | wall / local |"
echo "|---|---|---|---|---|"
printf '%s\n' "${rows[@]}"
