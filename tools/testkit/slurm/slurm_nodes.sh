# shellcheck shell=bash
# A throwaway multi-node Slurm cluster for tests: N hosts n01..nNN, each its own network and
# UTS namespace (own hostname, own address on a bridge), each running its own slurmd; one
# slurmctld and munged on the controller host `ctl`, which is the test itself. Every node
# reads the one slurm.conf and reaches munged through its socket, a path in the shared file
# system; only the spool directory, pid file and log are per node (%n in slurm.conf).
# Partition `fpga`, every node with Features=xilinx_u280_xrt2.x and Gres=fpga:3 (three
# cards), so the noctua2 job script's `-p fpga --constraint=xilinx_u280_xrt2.x` is served.
#
#   source tools/testkit/slurm/slurm_nodes.sh
#   slurm_isolate "$0" "$@"   # first: the test runs on in namespaces of its own (below)
#   slurm_up_nodes 4 3        # 4 nodes with 3 CPUs each (may exceed the machine)
#   sbatch -N 4 ...           # SLURM_CONF is exported; the nodes' subnet: SLURM_SUBNET_CIDR
#   slurm_down                # returns 1 when anything it made is still there afterwards
#
# The network exists only inside the test's namespaces: the host's network, hostname,
# mounts and processes are not touched, and everything goes when the test's PID namespace
# ends, even if the test is killed.
# shellcheck source=tools/testkit/slurm/slurm_cluster.sh
source "$(dirname "${BASH_SOURCE[0]}")/slurm_cluster.sh"

# The bridge's /24 and its name; both exist only in the test's network namespace.
SLURM_SUBNET=10.77.0
# shellcheck disable=SC2034 # for the scripts that source this one (Open MPI's *_if_include)
SLURM_SUBNET_CIDR=$SLURM_SUBNET.0/24
SLURM_BRIDGE=slurmbr0

# slurm_isolate "$0" "$@": runs the calling script again, from the start, as PID 1 of new
# PID, mount, network and UTS namespaces: directly where the test may (root with its
# capabilities), else inside a user namespace that maps the user to itself and keeps the
# capabilities it holds there (unprivileged user namespaces), so that `ip`, `mount` and
# `unshare` work on these namespaces and nothing else. Returns at once in the re-run script.
slurm_isolate() {
    if [ "${SLURM_ISOLATED:-}" = 1 ]; then return 0; fi
    local ns=(--pid --fork --mount-proc --mount --net --uts) why=() try out
    for try in "" "--user --map-current-user --keep-caps"; do
        # shellcheck disable=SC2206 # the options are words
        local these=($try "${ns[@]}")
        if out=$(unshare "${these[@]}" -- ip link add probe0 type bridge 2>&1); then
            export SLURM_ISOLATED=1
            exec unshare "${these[@]}" --kill-child -- "$BASH" "$@"
        fi
        why+=("unshare ${these[*]}: $out")
    done
    printf 'slurm_nodes: the test cannot make namespaces of its own:\n' >&2
    printf '  %s\n' "${why[@]}" >&2
    echo "It needs root with its capabilities, or unprivileged user namespaces (sysctl" \
        "kernel.unprivileged_userns_clone=1, user.max_user_namespaces > 0; a user namespace" \
        "may map uid 0 only with CAP_SETFCAP, so root without capabilities cannot)." >&2
    exit 1
}

_slurm_ns_made() {
    # the process holding a node's namespaces has left ours (unshare has run)
    [ "$(readlink "/proc/$1/ns/net")" != "$(readlink /proc/self/ns/net)" ] &&
        [ "$(readlink "/proc/$1/ns/uts")" != "$(readlink /proc/self/ns/uts)" ]
}

_slurm_idle_nodes() {
    [ "$(sinfo -h -N -p fpga -t idle -o %N | sort -u | wc -l)" -eq "$1" ]
}

# slurm_up_nodes N CPUS: the controller here, nodes n01..nNN (1 <= N <= 99) with CPUS each.
slurm_up_nodes() {
    local n=${1:-} cpus=${2:-3} i name pid
    if [ "${SLURM_ISOLATED:-}" != 1 ]; then
        echo "slurm_up_nodes: call slurm_isolate \"\$0\" \"\$@\" at the start of the test first (the nodes' network is made inside the test's own namespaces)" >&2
        return 1
    fi
    if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 1 ] || [ "$n" -gt 99 ] || ! [[ $cpus =~ ^[1-9][0-9]*$ ]]; then
        echo "slurm_up_nodes: usage: slurm_up_nodes N CPUS (1 <= N <= 99 nodes, CPUS >= 1 per node), got '$n' '$cpus'" >&2
        return 1
    fi
    # the cluster's files in a temporary directory every node sees (one file system for
    # all, as a cluster's shared one); not a tmpfs over /tmp, which would hide a checkout
    # or a bundle that lives under /tmp from the jobs
    _slurm_prepare || return 1

    # the controller's host: this namespace, on the bridge every node is plugged into
    hostname ctl
    ip link set lo up
    ip link add "$SLURM_BRIDGE" type bridge
    _SLURM_LINKS+=("$SLURM_BRIDGE")
    ip addr add "$SLURM_SUBNET.1/24" dev "$SLURM_BRIDGE"
    ip link set "$SLURM_BRIDGE" up

    # every host resolves every other by name, as on a cluster (a private /etc/hosts,
    # mounted in the test's mount namespace only)
    local names=() hosts="$SLURM_DIR/hosts"
    printf '127.0.0.1 localhost\n%s.1 ctl\n' "$SLURM_SUBNET" >"$hosts"
    for ((i = 1; i <= n; i++)); do
        name=$(printf 'n%02d' "$i")
        names+=("$name")
        printf '%s.%d %s\n' "$SLURM_SUBNET" $((10 + i)) "$name" >>"$hosts"
    done
    _slurm_mount --bind "$hosts" /etc/hosts || return 1

    # one slurm.conf and gres.conf for all (slurmd reads gres.conf beside slurm.conf); the
    # paths a node writes carry its name
    mkdir -p "$SLURM_DIR/spool"
    cat >>"$SLURM_CONF" <<CONF
SlurmctldHost=ctl($SLURM_SUBNET.1)
SlurmctldPort=6817
SlurmdPort=6818
SlurmdSpoolDir=$SLURM_DIR/spool/%n
SlurmdPidFile=$SLURM_DIR/spool/slurmd-%n.pid
SlurmdLogFile=$SLURM_DIR/log/slurmd-%n.log
GresTypes=fpga
CONF
    : >"$SLURM_DIR/gres.conf"
    for ((i = 1; i <= n; i++)); do
        name=${names[i - 1]}
        echo "NodeName=$name NodeHostname=$name NodeAddr=$SLURM_SUBNET.$((10 + i)) CPUs=$cpus RealMemory=2000 Features=xilinx_u280_xrt2.x Gres=fpga:3 State=UNKNOWN" >>"$SLURM_CONF"
        echo "NodeName=$name Name=fpga Count=3" >>"$SLURM_DIR/gres.conf"
    done
    echo "PartitionName=fpga Nodes=$(IFS=,; echo "${names[*]}") Default=YES MaxTime=30 State=UP OverSubscribe=YES" >>"$SLURM_CONF"

    # each node: a process holding its network and UTS namespaces, its hostname, a veth
    # pair from the bridge to its eth0, its address
    local holders=()
    for ((i = 1; i <= n; i++)); do
        name=${names[i - 1]}
        unshare --net --uts -- sleep infinity &
        pid=$!
        _SLURM_HOLDERS+=("$pid")
        holders+=("$pid")
        _slurm_wait 5 "the namespaces of $name" _slurm_ns_made "$pid" || return 1
        nsenter -t "$pid" -u hostname "$name"
        ip link add "v$name" type veth peer name eth0 netns "$pid"
        _SLURM_LINKS+=("v$name")
        ip link set "v$name" master "$SLURM_BRIDGE" up
        nsenter -t "$pid" -n ip link set lo up
        nsenter -t "$pid" -n ip addr add "$SLURM_SUBNET.$((10 + i))/24" dev eth0
        nsenter -t "$pid" -n ip link set eth0 up
    done

    _slurm_start slurmctld slurmctld -D -f "$SLURM_CONF"
    _slurm_wait 20 "slurmctld answering" scontrol ping || return 1
    # each slurmd finds its node by its host's name, as on a real node (no -N)
    for ((i = 1; i <= n; i++)); do
        _slurm_start "slurmd-${names[i - 1]}" nsenter -t "${holders[i - 1]}" -n -u -- slurmd -D -f "$SLURM_CONF"
    done
    _slurm_wait 60 "all $n nodes idle" _slurm_idle_nodes "$n" || { sinfo -N >&2 || true; return 1; }
}
