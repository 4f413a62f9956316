#!/usr/bin/env bash
# The 48-card ring (//deploy:aurora_ring_48, 16 nodes x 3 cards) on a 16-node local test
# cluster (tools/testkit/slurm/slurm_nodes.sh, on this one machine): its `local` job script as
# written runs `bench throughput`, then `bench latency`; each job is checked by
# deploy/tests/ring_check.py (placement, payload after 48 hops, every cable's counters) and
# its wall time and the CPU time of its 48 ranks are printed (the ranks' utime + stime, read
# from /proc every 0.5 s until they end). Not in the suite: minutes on 2 cores.
#
#   tools/checks/ring48.sh [SIZE [ITERATIONS]]     (default 16384 B x 4; latency 256 B x 4)
# Needs what //deploy:ring_multinode needs (root or unprivileged user namespaces).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
size=${1:-16384} iterations=${2:-4}
if [ "${SLURM_ISOLATED:-}" != 1 ]; then
    cd "$root"
    built=$(./forge build -c deploy.cluster=local --show-output \
        '//deploy:aurora_ring_48[job_script]' '//deploy:aurora_ring_48[topology]' \
        //tools/testkit/check:testkit-check)
    RING48_JOB=$root/$(awk '/\[job_script\]/ {print $2}' <<<"$built")
    RING48_TOPOLOGY=$root/$(awk '/\[topology\]/ {print $2}' <<<"$built")
    # the tests' checker (tools/testkit/check): the cluster's free ports, times, the job's nodes
    TESTKIT_CHECK=$root/$(awk '/testkit-check / {print $2}' <<<"$built")
    export RING48_JOB RING48_TOPOLOGY TESTKIT_CHECK
fi
# (the tests' cluster scripts, checked with their package: deploy/BUCK)
# shellcheck disable=SC1091
source "$root/tools/testkit/slurm/slurm_nodes.sh"
# shellcheck disable=SC1091
source "$root/tools/testkit/slurm/slurm_submit.sh"
slurm_isolate "$0" "$@"
cd "$root"
jobs="" mounts_before="" # set by test_cluster_up
test_cluster_up 16 3
export OMPI_MCA_rmaps_base_display_map=1

# cpu_of_ranks ID: waits for job ID to end, summing its ranks' CPU seconds as they run.
cpu_of_ranks() {
    local id=$1 tick p f
    declare -A seen=()
    tick=$(getconf CLK_TCK)
    while [[ "$(job_state "$id")" =~ ^(RUNNING|PENDING)$ ]]; do
        for p in $(pgrep -x aurora-host || true); do
            f=$(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null) || continue
            seen[$p]=$f
        done
        sleep 0.5
    done
    local total=0
    for p in "${!seen[@]}"; do total=$((total + seen[$p])); done
    echo "$("$TESTKIT_CHECK" ratio "$total" "$tick") s of CPU in ${#seen[@]} rank processes"
}

for mode in throughput latency; do
    s=$size
    [ "$mode" = latency ] && s=256
    out=$jobs/$mode
    t0=$(date +%s.%N)
    id=$(submit_async "$out.out" -t 30 "$RING48_JOB" --timeout-s 120 bench "$mode" --min-bytes "$s" \
        --max-bytes "$s" --iterations "$iterations" --csv "$out.csv" --hops "$out.hops.json" --ring-report "$out.ring.html")
    cpu=$(cpu_of_ranks "$id")
    state=$(job_end "$id")
    t1=$(date +%s.%N)
    wall=$("$TESTKIT_CHECK" elapsed "$t0" "$t1")
    echo "== bench $mode $s B x $iterations: job $id $state, wall $wall s, $cpu (load average $(cut -d' ' -f1-3 /proc/loadavg))"
    grep -E '^ring |^bench ' "$out.out" || true
    grep -E '^aurora-host: (FAILED|rank [0-9]+: error)|failed to TCP connect' "$out.out" | head -n 8 || true
    if [ "$state" = COMPLETED ]; then
        nodelist=$("$TESTKIT_CHECK" job-nodes "$out.out")
        rc=0
        python3 deploy/tests/ring_check.py --label "aurora_ring_48 bench $mode" --topology "$RING48_TOPOLOGY" \
            --nodes "$(scontrol show hostnames "$nodelist" | xargs)" --log "$out.out" --csv "$out.csv" \
            --hops "$out.hops.json" --page "$out.ring.html" --size "$s" --iterations "$iterations" >"$out.check" || rc=1
        grep -c '^ok' "$out.check" | sed 's/$/ checks ok/'
        grep -v '^ok' "$out.check" || true
        fail=$((fail | rc))
    else
        fail=1
    fi
done
slurm_down_checked "$mounts_before" || fail=1
exit "$fail"
