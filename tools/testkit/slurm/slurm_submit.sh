# shellcheck shell=bash
# Test jobs on the throwaway cluster (slurm_cluster.sh / slurm_nodes.sh): submitting and
# waiting for them, bounded, and taking the cluster down with a check that nothing is left.
#
#   source tools/testkit/slurm/slurm_submit.sh
#   submit LABEL LOG SBATCH-ARGS...   # 0 when the job ended COMPLETED; prints its log
#   submit_retried LABEL LOG ARGS...  # submit, again (at most 3 times) after an Open MPI connect failure
#   submit_async LOG SBATCH-ARGS...   # prints the job id
#   job_state ID                      # the job's state now (empty once Slurm forgot it)
#   job_end ID                        # waits (bounded) for the job to end, prints its state
#   test_cluster_up N CPUS            # slurm_up_nodes, and the variables the tests use
#   slurm_down_checked MOUNTS_BEFORE  # slurm_down, then nothing of the cluster may be left

# Open MPI 4.1's own report of a TCP connection between two ranks it could not set up (on
# a machine far busier than its cores the namespaced nodes' connects time out; docs/limits.md)
OMPI_CONNECT_FAILED='failed to TCP connect to a peer MPI process|help-mpi-btl-tcp.txt / client connect fail'

# job_state ID: the job's state as scontrol shows it now.
job_state() {
    scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'
}

# job_end ID: waits (bounded: 2 min) for the job to end and prints its state.
job_end() {
    local state=""
    for _ in $(seq 480); do
        state=$(job_state "$1")
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

# submit_retried LABEL LOG SBATCH-ARGS...: submit; a job Open MPI itself reports losing a
# TCP connect in (docs/limits.md) is submitted again, at most twice; any other failure is
# final. 0 when a run ended COMPLETED.
submit_retried() {
    local label=$1 log=$2 attempt
    for attempt in 1 2 3; do
        submit "$@" && return 0
        if [ $attempt -eq 3 ] || ! grep -Eq "$OMPI_CONNECT_FAILED" "$log"; then
            return 1
        fi
        echo "note $label: Open MPI failed a TCP connect between two ranks (attempt $attempt); submitting again"
    done
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
