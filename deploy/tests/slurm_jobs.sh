#!/usr/bin/env bash
# The `local` job scripts of deployments, submitted as a cluster user would: a throwaway
# single-node Slurm cluster (slurm_cluster.sh) runs `sbatch --wait` on each, with the
# simulation backend standing in for the cards. A link deployment runs `status`: every rank
# must have run, every AuroraFlow link must be up (CORE_STATUS 0x11ff) and no counter may
# show loss. A FINN deployment (app "finn" in its topology) runs the job's default command,
# `infer --images 8`: every image must agree with the unpartitioned reference, bit for bit,
# and no link may have lost a word.
#
#   slurm_jobs.sh --deployment NAME TOPOLOGY REPORT JOB RUN [...]
# env: TOOL_SLURMCTLD (the slurm toolchain's controller; the client commands sit beside it in the
# same slurm-wlm installation)
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=deploy/tests/slurm_cluster.sh
source "$here/slurm_cluster.sh"
: "${TOOL_SLURMCTLD:?TOOL_SLURMCTLD: the slurm toolchain must be given}"
out=${TEST_OUTPUT_DIR:-$(mktemp -d)}
mkdir -p "$out"

slurm_up 8
fail=0
while [ $# -gt 0 ]; do
    [ "$1" = --deployment ] || { echo "usage: $0 --deployment NAME TOPOLOGY REPORT JOB RUN ..." >&2; exit 2; }
    name=$2 topology=$3 job=$5
    shift 6
    ranks=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["devices"]))' "$topology")
    links=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["links"]))' "$topology")
    app=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["app"])' "$topology")
    log="$out/$name.job.out"
    if [ "$app" = Finn ] || [ "$app" = finn ]; then
        # the job script's own default command, with the results kept out of the checkout
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
        state=$(sacct -n -X -j "$id" -o State 2>/dev/null | xargs || true)
        [ -n "$state" ] || state=$(scontrol show job "$id" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
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
        nlinks=$(grep -c '^link .*overflow 0$' "$log" || true)
        if [ "$nlinks" -lt 1 ] || grep -Eq '^link .*overflow [1-9]|: error' "$log"; then
            echo "FAIL $name: job $id: link counters missing, lost words or an error"; bad=1
        fi
        if [ ! -s "$out/$name.infer/run.json" ] || [ ! -s "$out/$name.infer/outputs.npy" ]; then
            echo "FAIL $name: job $id wrote no run.json / outputs.npy in $out/$name.infer"; bad=1
        fi
        [ $bad -eq 0 ] && echo "ok   $name: job $id, infer agreed on 8 of 8 images, $nlinks link(s) without loss"
        fail=$((fail | bad))
        continue
    fi
    up=$(grep -c 'CORE_STATUS *0x11ff' "$log" || true)
    if [ "$up" -lt $((2 * links)) ]; then
        echo "FAIL $name: job $id: $up link ends report CORE_STATUS 0x11ff, want $((2 * links))"; bad=1
    fi
    seen=$(grep -c '^== fpga[0-9]* (rank [0-9]*' "$log" || true)
    if [ "$seen" -ne "$ranks" ]; then
        echo "FAIL $name: job $id: $seen of $ranks ranks reported"; bad=1
    fi
    if grep -Eq 'OVERFLOW_COUNT +[1-9]|^error|: error' "$log"; then
        echo "FAIL $name: job $id reports lost words or an error"; bad=1
    fi
    [ $bad -eq 0 ] && echo "ok   $name: job $id, $seen of $ranks rank(s), $up link ends up, no loss"
    fail=$((fail | bad))
done
exit $fail
