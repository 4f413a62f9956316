#!/usr/bin/env bash
# The local Slurm cluster for users: the same throwaway one-node cluster the tests start
# (tools/testkit/slurm/slurm_cluster.sh, sourced, not copied), left running until `down`.
#
#   ./forge run //deploy:local_cluster -- up [--nodes N] [--cpus C] [--dir DIR]
#   ./forge run //deploy:local_cluster -- status [--dir DIR]
#   ./forge run //deploy:local_cluster -- down --dir DIR
#
# The run target (deploy/local_cluster.bzl) puts the slurm toolchain's commands before the
# subcommand: --slurmctld CMD --sbatch CMD --srun CMD. Their directories go first on PATH,
# so the daemons and client commands slurm_cluster.sh calls are that installation's; and
# --check CMD, the tests' checker (tools/testkit/check), which finds the daemons' free ports.
# `up` writes DIR/pids (the daemons, for `down`) and DIR/env (`export SLURM_CONF=...`).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
prog="./forge run //deploy:local_cluster --"

usage() {
    cat >&2 <<EOF
usage: $prog up [--nodes 1] [--cpus C] [--dir DIR]   start a cluster, print how to use it
       $prog status [--dir DIR]                      its daemons and node (all under /tmp without --dir)
       $prog down --dir DIR                          stop it and remove DIR
EOF
    exit 2
}

die() {
    echo "local_cluster: $*" >&2
    exit 1
}

slurmctld="" sbatch="" srun="" check=""
while [ $# -gt 0 ]; do
    case $1 in
    --check) check=$2 ;;
    --slurmctld) slurmctld=$2 ;;
    --sbatch) sbatch=$2 ;;
    --srun) srun=$2 ;;
    *) break ;;
    esac
    shift 2
done
if [ -z "$slurmctld" ] || [ -z "$sbatch" ] || [ -z "$srun" ] || [ -z "$check" ]; then
    die "run it as $prog up|status|down (the target passes the slurm toolchain's commands and the checker)"
fi
[ $# -gt 0 ] || usage
sub=$1
shift

dir="" nodes=1 cpus=""
while [ $# -gt 0 ]; do
    case $1 in
    --dir) [ $# -ge 2 ] || usage; dir=$2 ;;
    --nodes) [ $# -ge 2 ] || usage; nodes=$2 ;;
    --cpus) [ $# -ge 2 ] || usage; cpus=$2 ;;
    -h | --help) usage ;;
    *) echo "local_cluster: unknown option $1" >&2; usage ;;
    esac
    shift 2
done

# the toolchain's installation, by absolute path
resolve() {
    command -v "$1" 2>/dev/null ||
        die "$1 (the slurm toolchain, toolchains//:slurm) is not installed: install slurm-wlm and munge (tools/bootstrap/apt.txt)"
}
slurmctld=$(resolve "$slurmctld")
sbatch=$(resolve "$sbatch")
srun=$(resolve "$srun")
PATH="$(dirname "$slurmctld"):$(dirname "$sbatch"):$(dirname "$srun"):$PATH"
command -v munged >/dev/null || die "munged is not installed: install munge (tools/bootstrap/apt.txt)"

TESTKIT_CHECK=$check
# shellcheck source=tools/testkit/slurm/slurm_cluster.sh
source "$here/../tools/testkit/slurm/slurm_cluster.sh"

# The daemons of the cluster in $1 that are still running: the pids `up` noted whose command
# line still names that directory (a pid reused since by another process is left alone).
cluster_pids() {
    local pid
    [ -f "$1/pids" ] || return 0
    while read -r pid; do
        [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$1/" && echo "$pid"
    done <"$1/pids"
    return 0
}

case $sub in
up)
    [ "$nodes" = 1 ] ||
        die "--nodes $nodes: the local cluster has one node (a multi-node one needs namespaces and root, see tools/testkit/slurm/slurm_nodes.sh); give --cpus for more ranks"
    cpus=${cpus:-$(nproc)}
    [[ $cpus =~ ^[1-9][0-9]*$ ]] || die "--cpus $cpus: give a positive number"
    unset FORGE_SLURM_DIR
    at=()
    if [ -n "$dir" ]; then
        case $dir in /*) ;; *) dir="$PWD/$dir" ;; esac
        # munged's socket path must fit a Unix socket address (107 bytes)
        [ $((${#dir} + 20)) -le 107 ] || die "--dir $dir is too long for munged's socket: give a shorter path"
        [ ! -e "$dir" ] || die "--dir $dir exists already: give a new directory (up makes it, down removes it)"
        FORGE_SLURM_DIR=$dir # slurm_up's directory; not exported: the daemons do not need it
        at=(--dir "$dir")
    fi
    # the daemons in a session of their own: no terminal's hangup or Ctrl-C reaches them
    if [ -z "${LOCAL_CLUSTER_SESSION:-}" ]; then
        command -v setsid >/dev/null || die "setsid is not installed: install util-linux"
        LOCAL_CLUSTER_SESSION=1 exec setsid -w bash "${BASH_SOURCE[0]}" --slurmctld "$slurmctld" \
            --sbatch "$sbatch" --srun "$srun" --check "$TESTKIT_CHECK" up --cpus "$cpus" "${at[@]}"
    fi
    # a failed start takes down what it started; a started cluster stays (no EXIT trap then,
    # and slurm_cluster.sh adds none of its own while this one is set)
    # shellcheck disable=SC2317 # run by the EXIT trap
    on_exit() {
        local rc=$?
        [ "$rc" -eq 0 ] || slurm_down || true
        exit "$rc"
    }
    trap on_exit EXIT
    slurm_up "$cpus" || die "the cluster did not start (the log above says why)"
    printf '%s\n' "${_SLURM_PIDS[@]}" >"$SLURM_DIR/pids"
    printf 'export SLURM_CONF=%q\n' "$SLURM_CONF" >"$SLURM_DIR/env"
    trap - EXIT
    cat <<EOF
Slurm cluster up in $SLURM_DIR: node $(hostname -s), partition local, $cpus CPUs.
Use it from a shell with
    export SLURM_CONF=$SLURM_CONF        (or: source $SLURM_DIR/env)
then $sbatch, $srun, squeue, scancel and sinfo talk to it; so do the job scripts of the
local cluster (toolchains/clusters/local.toml: ./forge build -c deploy.cluster=local ...) and
./forge run //remote:workers -- submit --cluster local ...
Logs: $SLURM_DIR/log. Stop it (and remove $SLURM_DIR):
    $prog down --dir $SLURM_DIR
EOF
    ;;
status)
    if [ -n "$dir" ]; then
        dirs=("$dir")
    else
        dirs=()
        for d in /tmp/forge-slurm.*; do [ -f "$d/pids" ] && dirs+=("$d"); done
        [ ${#dirs[@]} -gt 0 ] || { echo "no local cluster under /tmp (one elsewhere: status --dir DIR)"; exit 0; }
    fi
    for d in "${dirs[@]}"; do
        [ -f "$d/pids" ] || die "$d holds no local cluster (no $d/pids)"
        d=$(cd "$d" && pwd)
        mapfile -t alive < <(cluster_pids "$d")
        echo "$d: ${#alive[@]} of $(wc -l <"$d/pids") daemons running; export SLURM_CONF=$d/slurm.conf"
        if [ ${#alive[@]} -gt 0 ]; then
            SLURM_CONF=$d/slurm.conf sinfo -h -o '    node %n: %t, %c CPUs, partition %P' 2>&1 || true
            SLURM_CONF=$d/slurm.conf squeue -h -o '    job %i %j: %T' 2>&1 || true
        fi
    done
    ;;
down)
    [ -n "$dir" ] || die "down needs --dir DIR (the directory up printed; status lists them)"
    [ -f "$dir/pids" ] || die "$dir holds no local cluster (no $dir/pids): nothing to stop"
    SLURM_DIR=$(cd "$dir" && pwd)
    mapfile -t _SLURM_PIDS < <(cluster_pids "$SLURM_DIR")
    slurm_down || die "the cluster in $dir was not taken down completely (above)"
    echo "Slurm cluster in $dir stopped and removed."
    ;;
*)
    echo "local_cluster: unknown command $sub" >&2
    usage
    ;;
esac
