#!/usr/bin/env bash
# The user's local cluster (deploy/local_cluster.sh) as a user drives it: `up` returns with
# the daemons running, an `sbatch --wrap` job under the printed SLURM_CONF completes,
# `status` counts the daemons, `down` stops every one of them and removes the directory, and
# a second `down` is refused with what to do.
#
#   local_cluster.sh -- CLUSTER...   (CLUSTER: the command `./forge run //deploy:local_cluster --` runs)
set -euo pipefail
[ "${1:-}" = -- ] || { echo "usage: $0 -- CLUSTER..." >&2; exit 2; }
shift
cluster=("$@")
sbatch=""
for ((i = 0; i < ${#cluster[@]} - 1; i++)); do
    [ "${cluster[i]}" = --sbatch ] && sbatch=${cluster[i + 1]}
done
[ -n "$sbatch" ] || { echo "FAIL: no --sbatch in the cluster command: ${cluster[*]}" >&2; exit 1; }

scratch=$(mktemp -d)
pids=()
# under /tmp as the tests' clusters are (munged's socket path must be short); made by `up`
dir=$(mktemp -u /tmp/forge-slurm.XXXXXX)
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
    local rc=$?
    if [ -e "$dir" ]; then
        "${cluster[@]}" down --dir "$dir" >&2 || true
        rm -rf "$dir"
        rc=1
    fi
    # a daemon a broken down left running: stopped here, the test has failed already
    for pid in "${pids[@]}"; do
        if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$dir/"; then
            kill "$pid" 2>/dev/null || true
            rc=1
        fi
    done
    rm -rf "$scratch"
    exit "$rc"
}
trap cleanup EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}

"${cluster[@]}" up --cpus 2 --dir "$dir" | tee "$scratch/up.txt"
grep -qF "export SLURM_CONF=$dir/slurm.conf" "$scratch/up.txt" || fail "up did not print the SLURM_CONF to export"
grep -qF "down --dir $dir" "$scratch/up.txt" || fail "up did not print how to stop it"
mapfile -t pids <"$dir/pids"
[ ${#pids[@]} -eq 3 ] || fail "up noted ${#pids[@]} daemons, not 3 (munged, slurmctld, slurmd): ${pids[*]}"

# a user's shell: the env file up wrote, then sbatch
# shellcheck source=/dev/null
source "$dir/env"
# shellcheck disable=SC2016 # expanded by the job's shell
timeout 120 "$sbatch" --wait -t 2 -o "$scratch/job.out" --wrap 'echo "job $SLURM_JOB_ID ran on $(hostname -s)"' ||
    fail "the sbatch --wrap job did not complete (sbatch --wait: $?)"
cat "$scratch/job.out"
grep -q "^job [0-9]* ran on " "$scratch/job.out" || fail "the job's output is not there: $(cat "$scratch/job.out")"

"${cluster[@]}" status --dir "$dir" | tee "$scratch/status.txt"
grep -qF "3 of 3 daemons running" "$scratch/status.txt" || fail "status does not count the 3 daemons"
grep -q "node .*: idle" "$scratch/status.txt" || fail "status does not show the node idle"

# the session up gave slurmctld and slurmd: everything they start (slurmscriptd, job steps)
sid=$(ps -o sid= -p "${pids[1]}" | tr -d ' ')
if [ -z "$sid" ] || [ "$sid" = "$(ps -o sid= -p $$ | tr -d ' ')" ]; then
    fail "slurmctld (${pids[1]}) is not in a session of its own (sid '$sid')"
fi

"${cluster[@]}" down --dir "$dir"
[ ! -e "$dir" ] || fail "down left $dir"
for pid in "${pids[@]}"; do
    state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$pid/status" 2>/dev/null || true)
    [ -z "$state" ] || [ "$state" = Z ] || fail "daemon $pid outlived down: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
done
left=$(pgrep -a -f -- "$dir/" | grep -E 'munged|slurmctld|slurmd' || true)
[ -z "$left" ] || fail "processes of the cluster outlived down: $left"
left=$(ps -o pid=,stat=,args= -s "$sid" | awk '$2 !~ /^Z/' || true)
[ -z "$left" ] || fail "processes of the cluster's session $sid outlived down: $left"

if "${cluster[@]}" down --dir "$dir" 2>"$scratch/again.txt"; then
    fail "a second down --dir $dir succeeded"
fi
grep -qF "nothing to stop" "$scratch/again.txt" || fail "a second down did not say why: $(cat "$scratch/again.txt")"
echo "PASS: up, sbatch --wrap job, status, down; nothing of the cluster left"
