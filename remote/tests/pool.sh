# shellcheck shell=bash
# A pool of remote execution workers for the scaling test (workers_slurm.sh) and benchmark
# (bench/remote_scaling/run.sh): a BuildGrid (forge-re-grid serve) and a throwaway one-node
# Slurm cluster (tools/testkit/slurm/slurm_cluster.sh), workers submitted through //remote:workers
# as a user submits them, and scratch projects of stand-in place & route actions
# (remote/standin/defs.bzl) built by forge. `pool_down` (run on exit) cancels the job, waits
# for its workers and stops everything.
#
#   source remote/tests/pool.sh
#   pool_args "$@"      # --forge F --grid G --standin S --slurm TOOL --check K --workers CMD... [-- REST...]
#   pool_up             # POOL_ADDRESS: the BuildGrid
#   pool_submit 4       # POOL_JOB, POOL_JOBDIR; returns when the 4 workers are connected
#   standin_project DIR true 8 2.5 && standin_build DIR 8   # BUILD_WALL: seconds
#   pool_cancel         # scancel; fails if a worker process is left

_pool_here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=tools/testkit/slurm/slurm_cluster.sh
source "$_pool_here/../../tools/testkit/slurm/slurm_cluster.sh"
POOL_ROOT=$(cd "$_pool_here/../.." && pwd)
POOL_WORK="" POOL_ADDRESS="" POOL_JOB="" POOL_JOBDIR=""
_pool_grid_pid=""
FORGE="" GRID="" STANDIN="" WORKERS_CMD=() POOL_REST=()

pool_args() {
    local slurm=""
    while [ $# -gt 0 ]; do
        case $1 in
            --forge | --grid | --standin | --slurm | --check)
                [ $# -ge 2 ] || { echo "pool: $1 needs a value" >&2; return 2; }
                case $1 in
                    --forge) FORGE=$2 ;; --grid) GRID=$2 ;; --standin) STANDIN=$2 ;; --slurm) slurm=$2 ;;
                    # the free ports of slurm_cluster.sh (tools/testkit/check)
                    --check) TESTKIT_CHECK=$2 ;;
                esac
                shift 2 ;;
            --workers)
                shift
                while [ $# -gt 0 ] && [ "$1" != -- ]; do WORKERS_CMD+=("$1"); shift; done
                [ $# -eq 0 ] || shift
                # shellcheck disable=SC2034 # read by the sourcing script
                POOL_REST=("$@")
                break ;;
            *) echo "pool: unknown argument $1" >&2; return 2 ;;
        esac
    done
    # a missing piece is a failure, never a skip
    local what
    for what in FORGE GRID STANDIN slurm; do
        [ -n "${!what}" ] || { echo "pool: --${what,,} must be given (the target passes it)" >&2; return 2; }
    done
    [ -n "${TESTKIT_CHECK:-}" ] || { echo "pool: --check must be given (the target passes it)" >&2; return 2; }
    [[ $TESTKIT_CHECK == /* ]] || TESTKIT_CHECK=$PWD/$TESTKIT_CHECK
    # the builds run in other directories
    [[ $FORGE == /* ]] || FORGE=$PWD/$FORGE
    [[ $STANDIN == /* ]] || STANDIN=$PWD/$STANDIN
    [ ${#WORKERS_CMD[@]} -gt 0 ] || { echo "pool: --workers CMD... must be given" >&2; return 2; }
    command -v "$slurm" >/dev/null || { echo "pool: Slurm's $slurm is not installed" >&2; return 2; }
}

pool_fail() {
    echo "FAIL: $*"
    local f
    for f in "$POOL_WORK"/jobs/*/*.log "$POOL_WORK"/jobs/*/*.out; do
        [ -f "$f" ] && { echo "---- $f"; tail -n 20 "$f"; }
    done
    exit 1
}

pool_up() {
    POOL_WORK=$(mktemp -d /tmp/forge-pool.XXXXXX)
    # searchable by all: PostgreSQL runs as its own user below it when we are root
    chmod 755 "$POOL_WORK"
    # BuildGrid starts (PostgreSQL, migrations, bgd) while the cluster comes up
    "$GRID" serve --dir "$POOL_WORK/grid" >"$POOL_WORK/grid.out" 2>&1 &
    _pool_grid_pid=$!
    # slurm_up sets its own EXIT trap (slurm_down); pool_down replaces it and calls it
    if ! slurm_up 8; then
        kill "$_pool_grid_pid"
        wait "$_pool_grid_pid" || true
        rm -rf "$POOL_WORK"
        return 1
    fi
    trap pool_down EXIT
    local _
    for _ in $(seq 240); do
        [ -s "$POOL_WORK/grid/address" ] && break
        kill -0 "$_pool_grid_pid" 2>/dev/null || pool_fail "forge-re-grid exited:$(echo; cat "$POOL_WORK/grid.out")"
        sleep 0.25
    done
    [ -s "$POOL_WORK/grid/address" ] || pool_fail "BuildGrid did not come up within 60 s:$(echo; cat "$POOL_WORK/grid.out")"
    POOL_ADDRESS=$(cat "$POOL_WORK/grid/address")
}

# How many of the job's workers have their bot session (a worker logs it at once).
_pool_sessions() { cat "$POOL_JOBDIR"/worker-*.log 2>/dev/null | grep -c 'bot session' || true; }

pool_submit() {
    local n=$1 out script _
    out=$("${WORKERS_CMD[@]}" submit --count "$n" --address "$POOL_ADDRESS" --cluster local \
        --time 5 --dir "$POOL_WORK/jobs") || pool_fail "//remote:workers submit failed: $out"
    script=$(sed -n 's/^job script: //p' <<<"$out")
    POOL_JOB=$(sed -n 's/^job id: //p' <<<"$out")
    if [ ! -f "$script" ] || [ -z "$POOL_JOB" ]; then pool_fail "submit printed no job script and job id: $out"; fi
    POOL_JOBDIR=$(dirname "$script")
    # every worker in BuildGrid before a build starts (the job's start is not timed)
    for _ in $(seq 240); do
        [ "$(_pool_sessions)" -ge "$n" ] && return 0
        sleep 0.25
    done
    pool_fail "$(_pool_sessions) of $n workers of job $POOL_JOB opened a bot session within 60 s"
}

# The job's worker processes (on this one-node cluster, all of them are here).
_pool_workers() { pgrep -f "$POOL_JOBDIR/forge-re-worker" || true; }

# scancel, then wait (40 s, more than Slurm's KillWait) for every worker to be gone; kills
# and fails on what is left. Slurm sends SIGTERM first: each worker then tells BuildGrid
# it is going (logged as "stopped; BuildGrid told").
pool_cancel() {
    [ -n "$POOL_JOB" ] || return 0
    local job=$POOL_JOB left _
    POOL_JOB=""
    scancel "$job" 2>/dev/null || true
    for _ in $(seq 160); do
        left=$(_pool_workers)
        [ -z "$left" ] && return 0
        sleep 0.25
    done
    echo "FAIL: worker processes of job $job still running 40 s after scancel: $left"
    # shellcheck disable=SC2086 # one pid a word
    kill -9 $left 2>/dev/null || true
    return 1
}

pool_down() {
    local rc=$?
    pool_cancel || rc=1
    if [ -n "$_pool_grid_pid" ]; then
        kill "$_pool_grid_pid" 2>/dev/null || true
        wait "$_pool_grid_pid" 2>/dev/null || true
    fi
    slurm_down || rc=1
    rm -rf "$POOL_WORK"
    exit $rc
}

# A scratch project of COUNT stand-in actions of SECONDS: this project's platform, the
# stand-in rule, and the stand-in binary as a prebuilt tool at the label the rule names.
standin_project() {
    local dir=$1 remote_exec=$2 count=$3 seconds=$4
    mkdir -p "$dir"/{platforms,rules,remote/standin,pkg}
    cp "$POOL_ROOT"/platforms/{BUCK,defs.bzl} "$dir/platforms/"
    cp "$POOL_ROOT/remote/standin/defs.bzl" "$dir/remote/standin/"
    cp "$POOL_ROOT/remote/standin/netlist.txt" "$dir/pkg/"
    cp "$STANDIN" "$dir/remote/standin/pnr_standin"
    cat >"$dir/rules/prebuilt.bzl" <<'BZL'
def _prebuilt_impl(ctx):
    return [DefaultInfo(default_output = ctx.attrs.bin), RunInfo(args = cmd_args(ctx.attrs.bin))]

prebuilt = rule(impl = _prebuilt_impl, attrs = {"bin": attrs.source()})
BZL
    printf 'load("//rules:prebuilt.bzl", "prebuilt")\n\nprebuilt(name = "pnr_standin", bin = "pnr_standin", visibility = ["PUBLIC"])\n' \
        >"$dir/remote/standin/BUCK"
    printf 'load("//remote/standin:defs.bzl", "pnr_standin")\n\npnr_standin(name = "pnr", count = %s, seconds = "%s", src = "netlist.txt")\n' \
        "$count" "$seconds" >"$dir/pkg/BUCK"
    : >"$dir/.buckroot"
    printf '[cells]\n  root = .\n\n[buildfile]\n  name = BUCK\n\n[build]\n  execution_platforms = root//platforms:platforms\n\n[ci]\n  remote_exec = %s\n\n[buck2_re_client]\n  address = %s\n  tls = false\n' \
        "$remote_exec" "$POOL_ADDRESS" >"$dir/.buckconfig"
}

# forge build -j JOBS of the project (forge's remote actions hold a job slot each); its output
# in DIR.log, its wall time in BUILD_WALL (seconds).
standin_build() {
    local dir=$1 jobs=$2 start
    start=$(date +%s.%N)
    (cd "$dir" && "$FORGE" build //pkg:pnr -j "$jobs" --console simple) >"$dir.log" 2>&1 ||
        pool_fail "forge build in $dir failed:$(echo; cat "$dir.log")"
    # shellcheck disable=SC2034 # read by the sourcing script
    BUILD_WALL=$(awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.2f", e - s }')
}

standin_bit() { find "$1/buck-out" -name "fpga$2.bit" -type f | head -1; }

# Leases the job's workers started, in all and how many workers started one.
pool_leases() { cat "$POOL_JOBDIR"/worker-*.log 2>/dev/null | grep -c ': running' || true; }
pool_busy() { grep -l ': running' "$POOL_JOBDIR"/worker-*.log 2>/dev/null | wc -l; }
# Workers whose log says they told BuildGrid they stopped.
pool_goodbyes() { grep -l 'stopped; BuildGrid told' "$POOL_JOBDIR"/worker-*.log 2>/dev/null | wc -l; }
