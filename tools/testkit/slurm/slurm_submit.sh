# shellcheck shell=bash
# Test jobs on the throwaway cluster (slurm_cluster.sh / slurm_nodes.sh): submitting and
# waiting for them, bounded, and taking the cluster down with a check that nothing is left.
#
#   source tools/testkit/slurm/slurm_submit.sh
#   submit LABEL LOG SBATCH-ARGS...   # 0 when the job ended COMPLETED; prints its log
#   submit_async LOG SBATCH-ARGS...   # prints the job id
#   job_end ID                        # waits (bounded) for the job to end, prints its state
#   test_cluster_up N CPUS            # slurm_up_nodes, and the variables the tests use
#   slurm_down_checked MOUNTS_BEFORE  # slurm_down, then nothing of the cluster may be left

# job_end ID: waits (bounded: 2 min) for the job to end and prints its state.
job_end() {
    local state=""
    for _ in $(seq 480); do
        state=$(scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
        case "$state" in COMPLETED | FAILED | CANCELLED* | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) break ;; esac
        sleep 0.25
    done
    echo "$state"
}

# submit_async LOG SBATCH-ARGS...: sbatch with a 3 min limit, prints the job id.
submit_async() {
    local log=$1 id
    shift
    id=$(timeout 30 sbatch --parsable -o "$log" -t 3 "$@") || return 1
    echo "${id%%;*}"
}

# submit LABEL LOG SBATCH-ARGS...: sbatch, wait, show the output; 0 when COMPLETED.
submit() {
    local label=$1 log=$2 id state
    shift 2
    if ! id=$(submit_async "$log" "$@"); then
        echo "FAIL $label: sbatch refused: sbatch $*"
        return 1
    fi
    state=$(job_end "$id")
    echo "---- job $id ($label): $state"
    cat "$log" 2>/dev/null || true
    if [ "$state" != COMPLETED ]; then
        echo "FAIL $label: job $id ended ${state:-in no known state} (sbatch $*)"
        return 1
    fi
}

# slurm_down_checked MOUNTS_BEFORE: takes the cluster down (slurm_down), then checks,
# independently of slurm_down's own list, that no link but loopback is left in this
# namespace, no process but this shell in its PID namespace, and the mounts are as they
# were (MOUNTS_BEFORE: /proc/self/mountinfo before the cluster came up). 1 otherwise.
slurm_down_checked() {
    local before=$1 extra procs="" d comm mounts
    slurm_down || return 1
    extra=$(ip -o link show | awk -F': ' '$2 != "lo" {print $2}' | xargs)
    for d in /proc/[0-9]*; do
        [ "${d#/proc/}" != $$ ] || continue
        _slurm_gone "${d#/proc/}" && continue
        comm="?"
        read -r comm <"$d/comm" 2>/dev/null || true
        procs+=" ${d#/proc/}($comm)"
    done
    mounts=$(diff <(echo "$before") /proc/self/mountinfo | grep '^>' | xargs || true)
    if [ -n "$extra" ] || [ -n "$procs" ] || [ -n "$mounts" ]; then
        echo "FAIL teardown: left behind: links [$extra] processes [$procs] mounts [$mounts]"
        return 1
    fi
    echo "ok   teardown: no process, link, mount or directory of the cluster left"
}

# test_cluster_up N CPUS: after slurm_isolate, brings up N nodes of CPUS each and sets
# `start` and `up` (times), `mounts_before` (for slurm_down_checked), `jobs` (a directory
# for the jobs' files) and `fail=0`.
# shellcheck disable=SC2034 # the variables are the calling test's
test_cluster_up() {
    start=$(date +%s.%N)
    mounts_before=$(cat /proc/self/mountinfo)
    slurm_up_nodes "$1" "$2"
    up=$(date +%s.%N)
    jobs=$SLURM_DIR/jobs
    mkdir -p "$jobs"
    fail=0
}
