# shellcheck shell=bash
# A throwaway single-node Slurm cluster for tests: a munge key and munged, a slurm.conf
# with this host as the one node, slurmctld and slurmd as the test's own processes, all in
# one temporary directory; `slurm_down` (also run on exit, unless the test has an EXIT trap
# already, which must then call it) stops them and removes it.
# Uses Debian's slurm-wlm 22.05 and munge (tools/bootstrap/apt.txt). Users start the same
# cluster with `./forge run //deploy:local_cluster -- up` (deploy/local_cluster.sh).
# slurm_nodes.sh builds the multi-node cluster on the same pieces.
#
#   source tools/testkit/slurm/slurm_cluster.sh
#   slurm_up 8            # CPUs the node offers (may exceed the machine: ranks oversubscribe)
#   sbatch --wait job.sh  # SLURM_CONF is exported
#   slurm_down

SLURM_DIR=""
# What slurm_down takes apart, in the order it was made: the daemons (stopped last one
# first), the processes holding each node's namespaces, the network links and the mounts
# made in the test's own namespaces (multi-node mode only).
_SLURM_PIDS=()
_SLURM_HOLDERS=()
_SLURM_LINKS=()
_SLURM_MOUNTS=()
_SLURM_MOUNT_IDS=()

# A port free on 127.0.0.1 (tools/testkit/check: the test names testkit-check in TESTKIT_CHECK;
# made absolute here, as a test may change directory before slurm_up).
[ -z "${TESTKIT_CHECK:-}" ] || TESTKIT_CHECK=$(realpath "$TESTKIT_CHECK")
_slurm_free_port() {
    "${TESTKIT_CHECK:?slurm_cluster: TESTKIT_CHECK must name testkit-check (//tools/testkit/check:testkit-check)}" free-port
}

_slurm_wait() {
    # _slurm_wait SECONDS DESCRIPTION COMMAND...: poll COMMAND until it succeeds.
    local limit=$1 what=$2 i
    shift 2
    for ((i = 0; i < limit * 4; i++)); do
        "$@" >/dev/null 2>&1 && return 0
        sleep 0.25
    done
    echo "slurm_cluster: $what did not happen within ${limit}s; logs in $SLURM_DIR/log:" >&2
    tail -n 20 "$SLURM_DIR"/log/* >&2 || true
    return 1
}

# The temporary directory, munged in it and the parts of slurm.conf both modes share.
_slurm_prepare() {
    # FORGE_SLURM_DIR, when set, names the directory (new, made here) instead: the user's
    # cluster (deploy/local_cluster.sh) lives where its user says
    if [ -n "${FORGE_SLURM_DIR:-}" ]; then
        mkdir "$FORGE_SLURM_DIR" || {
            echo "slurm_cluster: cannot make $FORGE_SLURM_DIR (it must not exist yet)" >&2
            return 1
        }
        SLURM_DIR=$(cd "$FORGE_SLURM_DIR" && pwd)
    else
        SLURM_DIR=$(mktemp -d /tmp/forge-slurm.XXXXXX)
    fi
    # a test with an EXIT trap of its own (its scratch directory) calls slurm_down from it
    [ -n "$(trap -p EXIT)" ] || trap slurm_down EXIT
    mkdir -p "$SLURM_DIR"/{key,munge,state,spool,log}
    # munged insists: the key private to its owner, the socket's directory searchable by all
    chmod 755 "$SLURM_DIR" "$SLURM_DIR/munge"
    chmod 700 "$SLURM_DIR/key"
    head -c 1024 /dev/urandom >"$SLURM_DIR/key/munge.key"
    chmod 400 "$SLURM_DIR/key/munge.key"
    local sock="$SLURM_DIR/munge/munge.socket"
    munged --socket="$sock" --key-file="$SLURM_DIR/key/munge.key" \
        --pid-file="$SLURM_DIR/munge/munged.pid" --log-file="$SLURM_DIR/log/munged.log" \
        --seed-file="$SLURM_DIR/munge/seed" || { echo "slurm_cluster: munged did not start" >&2; return 1; }
    _slurm_wait 10 "munged answering" munge -S "$sock" -n || return 1
    # munged runs detached: its pid is the one its pid file names
    _SLURM_PIDS+=("$(cat "$SLURM_DIR/munge/munged.pid")")
    export SLURM_CONF="$SLURM_DIR/slurm.conf"
    cat >"$SLURM_CONF" <<CONF
ClusterName=forgetest
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
StateSaveLocation=$SLURM_DIR/state
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmctldLogFile=$SLURM_DIR/log/slurmctld.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MailProg=/bin/true
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SlurmdParameters=config_overrides
CONF
}

# _slurm_start NAME COMMAND...: a daemon in the foreground (-D), as a child of the test.
_slurm_start() {
    local name=$1
    shift
    "$@" >"$SLURM_DIR/log/$name.out" 2>&1 &
    _SLURM_PIDS+=("$!")
}

slurm_up() {
    local cpus=${1:-8} host
    host=$(hostname -s)
    _slurm_prepare || return 1
    local ctld_port d_port
    ctld_port=$(_slurm_free_port)
    d_port=$(_slurm_free_port)
    cat >>"$SLURM_CONF" <<CONF
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
SlurmdSpoolDir=$SLURM_DIR/spool
SlurmdPidFile=$SLURM_DIR/slurmd.pid
SlurmdLogFile=$SLURM_DIR/log/slurmd.log
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=2000 State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=30 State=UP OverSubscribe=YES
CONF
    _slurm_start slurmctld slurmctld -D -f "$SLURM_CONF"
    _slurm_wait 20 "slurmctld answering" scontrol ping || return 1
    _slurm_start slurmd slurmd -D -f "$SLURM_CONF" -N "$host"
    _slurm_wait 30 "node $host idle" bash -c "sinfo -h -n $host -o %t | grep -qx idle" || return 1
}

# _slurm_mount ARGS... MOUNTPOINT: mount, and note the new mount (its id: a mount point
# may hold the host's own mount beneath, e.g. a container's /etc/hosts) for slurm_down.
_slurm_mount() {
    local at=${*: -1} id
    mount "$@" || return 1
    # the last entry for a mount point is the one on top
    id=$(awk -v at="$at" '$5 == at {id = $1} END {print id}' /proc/self/mountinfo)
    _SLURM_MOUNTS+=("$at")
    _SLURM_MOUNT_IDS+=("$id:$at")
}

# A process that is gone (or only a zombie waiting for its parent).
_slurm_gone() {
    local state
    state=$(sed -n 's/^State:[[:space:]]*\([A-Z]\).*/\1/p' "/proc/$1/status" 2>/dev/null) || return 0
    [ -z "$state" ] || [ "$state" = Z ]
}

_slurm_stop() {
    local pid
    for pid in "$@"; do kill "$pid" 2>/dev/null || true; done
    for pid in "$@"; do
        for _ in $(seq 40); do _slurm_gone "$pid" && break; sleep 0.25; done
        kill -9 "$pid" 2>/dev/null || true
    done
}

# Stops everything slurm_up / slurm_up_nodes started and removes what they made; returns 1
# (after removing what it could) when something is still there afterwards.
slurm_down() {
    [ -n "$SLURM_DIR" ] || return 0
    local i pid left=()
    local daemons=()
    for ((i = ${#_SLURM_PIDS[@]} - 1; i >= 0; i--)); do daemons+=("${_SLURM_PIDS[i]}"); done
    _slurm_stop "${daemons[@]}"
    # a node's namespaces go with the last process in them, its end of the veth pair with
    # its network namespace; each link is deleted here too, so none depends on that
    _slurm_stop "${_SLURM_HOLDERS[@]}"
    for i in "${_SLURM_LINKS[@]}"; do ip link del "$i" 2>/dev/null || true; done
    rm -rf "$SLURM_DIR"
    for ((i = ${#_SLURM_MOUNTS[@]} - 1; i >= 0; i--)); do umount "${_SLURM_MOUNTS[i]}" 2>/dev/null || true; done
    for pid in "${_SLURM_PIDS[@]}" "${_SLURM_HOLDERS[@]}"; do
        _slurm_gone "$pid" || left+=("process $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null))")
    done
    for i in "${_SLURM_LINKS[@]}"; do
        ! ip link show "$i" >/dev/null 2>&1 || left+=("link $i")
    done
    for i in "${_SLURM_MOUNT_IDS[@]}"; do
        ! awk -v id="${i%%:*}" '$1 == id {found = 1} END {exit !found}' /proc/self/mountinfo ||
            left+=("mount on ${i#*:}")
    done
    [ ! -e "$SLURM_DIR" ] || left+=("directory $SLURM_DIR")
    SLURM_DIR=""
    _SLURM_PIDS=() _SLURM_HOLDERS=() _SLURM_LINKS=() _SLURM_MOUNTS=() _SLURM_MOUNT_IDS=()
    if [ ${#left[@]} -gt 0 ]; then
        printf 'slurm_down: still there after the teardown: %s\n' "${left[@]}" >&2
        return 1
    fi
}
