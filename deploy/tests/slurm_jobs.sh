#!/usr/bin/env bash
# The `local` job scripts of deployments, submitted as a cluster user would: a throwaway
# single-node Slurm cluster (slurm_cluster.sh) runs `sbatch --wait` on each, with the
# simulation backend standing in for the cards. A link deployment runs `status`: every rank
# must have run, every AuroraFlow link must be up (CORE_STATUS 0x11ff) and no counter may
# show loss. A FINN deployment (app "finn" in its topology) is run as a user takes it to a
# cluster: its local-profile bundle (BUNDLE) copied to a path with a space at another depth,
# checked against its SHA256SUMS, and that copy's job.sh submitted with its default command,
# `infer --images 8`: every image must agree with the unpartitioned reference, bit for bit,
# and no link may have lost a word; a copy with one altered file is refused by its run.sh.
# Then one rank fails for real: a copy of a two-device
# job script whose fpga1 xclbin is cut short must end every rank within 2 s of rank 1's
# error, with that error in the job's output and the job FAILED.
#
#   slurm_jobs.sh --deployment NAME TOPOLOGY REPORT JOB RUN BUNDLE [...]
# env: TOOL_SLURMCTLD (the slurm toolchain's controller; the client commands sit beside it in the
# same slurm-wlm installation), TESTKIT_CHECK (tools/testkit/check: topology, job logs, times)
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=tools/testkit/slurm/slurm_cluster.sh
source "$here/../../tools/testkit/slurm/slurm_cluster.sh"
# shellcheck source=tools/testkit/slurm/slurm_submit.sh
source "$here/../../tools/testkit/slurm/slurm_submit.sh"
: "${TOOL_SLURMCTLD:?TOOL_SLURMCTLD: the slurm toolchain must be given}"
check=$(realpath "${TESTKIT_CHECK:?TESTKIT_CHECK: testkit-check (tools/testkit/check) must be given}")
# The job outputs: kept in TEST_OUTPUT_DIR when given, else removed on exit with the cluster
# (slurm_cluster.sh leaves its teardown to a test's own EXIT trap); a teardown that leaves
# something behind fails the test.
scratch=$(mktemp -d)
# shellcheck disable=SC2317 # run by the EXIT trap (shellcheck 0.9 misses that after an `exit`)
cleanup() {
    local rc=$?
    slurm_down || rc=1
    rm -rf "$scratch"
    exit "$rc"
}
trap cleanup EXIT
out=${TEST_OUTPUT_DIR:-$scratch/out}
mkdir -p "$out"

slurm_up 8
fail=0
while [ $# -gt 0 ]; do
    [ "$1" = --deployment ] || { echo "usage: $0 --deployment NAME TOPOLOGY REPORT JOB RUN BUNDLE ..." >&2; exit 2; }
    name=$2 topology=$3 job=$5 bundle=$7
    shift 7
    [ -n "${pair_job:-}" ] || ! grep -q -- '--xclbin .\?fpga1=' "$job" || pair_job=$job
    ranks=$("$check" topology devices "$topology")
    links=$("$check" topology links "$topology")
    app=$("$check" topology app "$topology")
    log="$out/$name.job.out"
    if [ "$app" = Finn ] || [ "$app" = finn ]; then
        # as a user takes it to the cluster: the bundle copied to another place (a path with a
        # space, at another depth) and its own job script submitted from there, with the job
        # script's default command and the results kept out of the bundle
        copy="$out/copies/$name bundle/taken/elsewhere/$name"
        rm -rf "$copy" && mkdir -p "$(dirname "$copy")" && cp -r "$bundle" "$copy" && chmod -R u+w "$copy"
        if ! (cd "$copy" && sha256sum --quiet --strict -c SHA256SUMS); then
            echo "FAIL $name: the copied bundle does not match its SHA256SUMS"; fail=1; continue
        fi
        job="$copy/job.sh"
        cmd=(infer --images 8 --out "$out/$name.infer")
    else
        cmd=(status)
    fi
    # every wait is bounded: the job's own limit (-t) and this one
    if ! id=$(timeout 30 sbatch --parsable -o "$log" -t 5 "$job" "${cmd[@]}"); then
        echo "FAIL $name: sbatch refused $job"; fail=1; continue
    fi
    id=${id%%;*}
    state=""
    for _ in $(seq 600); do
        state=$(job_state "$id")
        case "$state" in COMPLETED | FAILED | CANCELLED* | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) break ;; esac
        sleep 0.5
    done
    echo "---- job $id ($name): $state"
    cat "$log" 2>/dev/null || true
    if [ "$state" != COMPLETED ]; then
        echo "FAIL $name: job $id ended $state (output: $log)"; fail=1; continue
    fi
    bad=0
    if [ "$app" = Finn ] || [ "$app" = finn ]; then
        if ! grep -q 'infer .*: 8 images through .*top-1 agreement 8/8, top-5 agreement 8/8, bit-exact 8/8 with the unpartitioned reference' "$log"; then
            echo "FAIL $name: job $id: no agreement line for 8 of 8 images"; bad=1
        fi
        if ! links_seen=$("$check" job-links "$log" 2>&1); then
            echo "FAIL $name: job $id: link counters missing, lost words or an error:"; echo "$links_seen"; bad=1
        fi
        if [ ! -s "$out/$name.infer/run.json" ] || [ ! -s "$out/$name.infer/outputs.npy" ]; then
            echo "FAIL $name: job $id wrote no run.json / outputs.npy in $out/$name.infer"; bad=1
        fi
        # an altered copy is refused before anything runs
        printf 'x' >>"$copy/topology.json"
        if bash "$copy/run.sh" local status >"$out/$name.altered.log" 2>&1 ||
            ! grep -q 'do not match its SHA256SUMS' "$out/$name.altered.log"; then
            echo "FAIL $name: run.sh ran from an altered copy of the bundle:"; cat "$out/$name.altered.log"; bad=1
        fi
        [ $bad -eq 0 ] && echo "ok   $name: job $id from a copy of the bundle ($copy), infer agreed on 8 of 8 images, $links_seen; an altered copy refused"
        fail=$((fail | bad))
        continue
    fi
    # every rank's report, both ends of every link up, no loss, no error
    if ! seen=$("$check" job-status "$log" "$ranks" "$links" 2>&1); then
        echo "FAIL $name: job $id:"; echo "$seen"; bad=1
    fi
    [ $bad -eq 0 ] && echo "ok   $name: job $id, $seen"
    fail=$((fail | bad))
done

# One rank fails: rank 1 loads a truncated xclbin while rank 0 waits for it.
failing_rank() {
    local job=$1 bad="$out/fpga1.truncated.xclbin" copy="$out/failing_job.sh" log="$out/failing.job.out"
    local orig
    orig=$(grep -o -- "--xclbin '\?fpga1=[^ )']*" "$job" | head -1 | sed "s/^--xclbin '\?fpga1=//")
    [ -f "$orig" ] || { echo "FAIL failing rank: no fpga1 xclbin in $job"; return 1; }
    head -c $(($(stat -c %s "$orig") / 3)) "$orig" >"$bad"
    sed "s#--xclbin '\?fpga1=[^ )']*'\?#--xclbin 'fpga1=$bad'#" "$job" >"$copy"
    grep -q "fpga1=$bad" "$copy" || { echo "FAIL failing rank: could not point $copy at $bad"; return 1; }
    local id t_err="" t_end="" state=""
    id=$(timeout 30 sbatch --parsable -o "$log" -t 2 "$copy" --timeout-s 30 status) || { echo "FAIL failing rank: sbatch refused $copy"; return 1; }
    id=${id%%;*}
    # the error line and the launcher's verdict (printed once mpirun has reaped every rank),
    # each timed as it appears in the job's output
    for _ in $(seq 1200); do
        if [ -z "$t_err" ] && grep -q '^aurora-host: rank 1: error: ' "$log" 2>/dev/null; then t_err=$(date +%s.%N); fi
        if [ -z "$t_end" ] && grep -q '^aurora-host: FAILED' "$log" 2>/dev/null; then t_end=$(date +%s.%N); fi
        [ -n "$t_end" ] && break
        sleep 0.05
    done
    for _ in $(seq 100); do
        state=$(job_state "$id")
        case "$state" in COMPLETED | FAILED | CANCELLED* | TIMEOUT | NODE_FAIL | OUT_OF_MEMORY) break ;; esac
        sleep 0.2
    done
    echo "---- job $id (failing rank): $state"
    cat "$log" 2>/dev/null || true
    local bad_=0
    if [ -z "$t_err" ] || [ -z "$t_end" ]; then
        echo "FAIL failing rank: job $id: no error line of rank 1 or no end of the run within 60 s"; return 1
    fi
    local took
    took=$("$check" elapsed "$t_err" "$t_end" 2)
    if ! "$check" below "$took" 2.0; then
        echo "FAIL failing rank: job $id: the run ended ${took}s after rank 1's error (want < 2 s)"; bad_=1
    fi
    if ! grep -qF "aurora-host: rank 1: error: rank 1: loading $bad" "$log"; then
        echo "FAIL failing rank: job $id: rank 1's message does not name $bad"; bad_=1
    fi
    if ! grep -q 'FAILED: 2 rank(s) did not finish: 0, 1' "$log"; then
        echo "FAIL failing rank: job $id: the launcher does not report both ranks ended"; bad_=1
    fi
    if [ "$state" != FAILED ]; then
        echo "FAIL failing rank: job $id ended $state, want FAILED"; bad_=1
    fi
    [ $bad_ -eq 0 ] && echo "ok   failing rank: job $id, every rank ended ${took}s after rank 1's error, job FAILED"
    return $bad_
}
if [ -n "${pair_job:-}" ]; then
    failing_rank "$pair_job" || fail=1
else
    echo "FAIL failing rank: no two-device deployment given"; fail=1
fi
exit $fail
