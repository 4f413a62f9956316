#!/usr/bin/env bash
# Remote execution's workers as a Slurm job, end to end (pool.sh: a BuildGrid, a throwaway
# one-node Slurm cluster): 4 workers submitted through //remote:workers (`submit --cluster
# local`), then `forge build -c ci.remote_exec=true` of 8 stand-in place & route actions of
# T seconds in a scratch project. It must take at most 1.5 x ceil(8/4) x T of wall time, run
# all 8 on the job's workers (the summary's `remote: 8`, the workers' logs, every worker
# busy), give outputs byte-identical to the same actions built locally and to the stand-in's
# recipe recomputed with sha256sum; after `scancel` every worker must have told BuildGrid it
# is going (status BOT_TERMINATING) and no worker process may be left.
#
#   workers_slurm.sh --forge F --grid G --standin S --slurm TOOL --workers CMD...
set -euo pipefail
# shellcheck source=remote/tests/pool.sh
source "$(dirname "${BASH_SOURCE[0]}")/pool.sh"
pool_args "$@"
T=3 ACTIONS=8 WORKERS=4

pool_up
pool_submit "$WORKERS"
echo "ok   job $POOL_JOB: $WORKERS workers have their bot sessions ($POOL_JOBDIR/job.sh)"

remote=$POOL_WORK/remote local=$POOL_WORK/local
standin_project "$remote" true "$ACTIONS" "$T"
standin_build "$remote" "$ACTIONS"
limit=$(awk -v n="$ACTIONS" -v w="$WORKERS" -v t="$T" 'BEGIN { printf "%.2f", 1.5 * int((n + w - 1) / w) * t }')
grep -q "remote: $ACTIONS, local: 0" "$remote.log" ||
    pool_fail "not every action ran remotely:$(echo; grep Commands "$remote.log")"
awk -v a="$BUILD_WALL" -v b="$limit" 'BEGIN { exit !(a <= b) }' ||
    pool_fail "$ACTIONS actions of ${T}s over $WORKERS workers took ${BUILD_WALL}s, more than 1.5 x ceil($ACTIONS/$WORKERS) x $T = ${limit}s (load average $(cut -d' ' -f1-3 /proc/loadavg)):$(echo; cat "$remote.log")"
[ "$(pool_leases)" -eq "$ACTIONS" ] || pool_fail "the workers' logs show $(pool_leases) leases run, want $ACTIONS"
[ "$(pool_busy)" -eq "$WORKERS" ] || pool_fail "only $(pool_busy) of $WORKERS workers ran an action"
echo "ok   $ACTIONS actions of ${T}s on $WORKERS workers in ${BUILD_WALL}s (limit ${limit}s), all remote, every worker busy"

standin_project "$local" false "$ACTIONS" "$T"
standin_build "$local" "$ACTIONS"
grep -q "remote: 0, local: $ACTIONS" "$local.log" ||
    pool_fail "the local build did not run every action locally:$(echo; grep Commands "$local.log")"
for ((i = 0; i < ACTIONS; i++)); do
    r=$(standin_bit "$remote" "$i") l=$(standin_bit "$local" "$i")
    if [ -z "$r" ] || [ -z "$l" ]; then pool_fail "fpga$i.bit missing (remote: '$r', local: '$l')"; fi
    cmp -s "$r" "$l" || pool_fail "fpga$i.bit differs between the remote and the local build"
done
# the stand-in's recipe (remote/standin/src/bitstream.rs), recomputed independently
seed=$(sha256sum <"$remote/pkg/netlist.txt" | cut -c1-64)
for i in 0 $((ACTIONS - 1)); do
    want=$(printf '%s' "$seed:$i:1" | sha256sum | cut -c1-64)
    got=$(od -An -tx1 -j 32 -N 32 "$(standin_bit "$remote" "$i")" | tr -d ' \n')
    [ "$got" = "$want" ] || pool_fail "fpga$i.bit block 1 is $got, the recipe gives $want"
done
echo "ok   remote outputs byte-identical to the local build's, and to the recipe"

job=$POOL_JOB
pool_cancel || exit 1
state=$(scontrol show job "$job" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
[ "$state" != RUNNING ] || pool_fail "job $job still RUNNING after its workers stopped"
[ "$(pool_goodbyes)" -eq "$WORKERS" ] || pool_fail "$(pool_goodbyes) of $WORKERS workers told BuildGrid they stopped"
echo "ok   scancel $job: job ${state:-gone}, every worker told BuildGrid it stopped, no worker process left"
