# shellcheck shell=bash
# A throwaway single-node Slurm cluster for tests: a munge key and munged, a slurm.conf
# with this host as the one node, slurmctld and slurmd as the test's own processes, all in
# one temporary directory; `slurm_down` (also run on exit) stops them and removes it.
# Uses Debian's slurm-wlm 22.05 and munge (tools/bootstrap/apt.txt).
#
#   source deploy/tests/slurm_cluster.sh
#   slurm_up 8            # CPUs the node offers (may exceed the machine: ranks oversubscribe)
#   sbatch --wait job.sh  # SLURM_CONF is exported
#   slurm_down

SLURM_DIR=""

_slurm_free_port() {
    python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
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

slurm_up() {
    local cpus=${1:-8} host
    host=$(hostname -s)
    SLURM_DIR=$(mktemp -d /tmp/forge-slurm.XXXXXX)
    trap slurm_down EXIT
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

    local ctld_port d_port
    ctld_port=$(_slurm_free_port)
    d_port=$(_slurm_free_port)
    cat >"$SLURM_DIR/slurm.conf" <<CONF
ClusterName=forgetest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$sock
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
StateSaveLocation=$SLURM_DIR/state
SlurmdSpoolDir=$SLURM_DIR/spool
SlurmctldPidFile=$SLURM_DIR/slurmctld.pid
SlurmdPidFile=$SLURM_DIR/slurmd.pid
SlurmctldLogFile=$SLURM_DIR/log/slurmctld.log
SlurmdLogFile=$SLURM_DIR/log/slurmd.log
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
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=2000 State=UNKNOWN
PartitionName=local Nodes=$host Default=YES MaxTime=30 State=UP OverSubscribe=YES
CONF
    export SLURM_CONF="$SLURM_DIR/slurm.conf"
    slurmctld -D -f "$SLURM_CONF" >"$SLURM_DIR/log/slurmctld.out" 2>&1 &
    echo $! >"$SLURM_DIR/slurmctld.child"
    _slurm_wait 20 "slurmctld answering" scontrol ping || return 1
    slurmd -D -f "$SLURM_CONF" -N "$host" >"$SLURM_DIR/log/slurmd.out" 2>&1 &
    echo $! >"$SLURM_DIR/slurmd.child"
    _slurm_wait 30 "node $host idle" bash -c "sinfo -h -n $host -o %t | grep -qx idle" || return 1
}

slurm_down() {
    [ -n "$SLURM_DIR" ] && [ -d "$SLURM_DIR" ] || return 0
    local f pid
    for f in slurmd.child slurmctld.child munge/munged.pid; do
        pid=$(cat "$SLURM_DIR/$f" 2>/dev/null) || continue
        kill "$pid" 2>/dev/null || true
    done
    for f in slurmd.child slurmctld.child munge/munged.pid; do
        pid=$(cat "$SLURM_DIR/$f" 2>/dev/null) || continue
        for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
        kill -9 "$pid" 2>/dev/null || true
    done
    rm -rf "$SLURM_DIR"
    SLURM_DIR=""
}
