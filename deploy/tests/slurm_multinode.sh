#!/usr/bin/env bash
# Slurm across hosts: a throwaway 4-node cluster (slurm_nodes.sh: each node its own network
# and UTS namespace, its own slurmd) takes
#  1. `srun hostname` over -N 4 --ntasks-per-node=1: four distinct node names;
#  2. the noctua2 job script's request (-p fpga --constraint=xilinx_u280_xrt2.x) for the
#     Noctua 2 shape, 3 tasks (cards) on each of 4 nodes, with --gres=fpga:3; a feature no
#     node has and a fourth card per node are refused;
#  3. the `local` job script of a two-card deployment, submitted with -N 2
#     --ntasks-per-node=1, running `status`: Open MPI's map puts rank 0 and rank 1 on
#     different nodes, every link end is up (CORE_STATUS 0x11ff), no loss, no error;
#  4. the same job script running `bench throughput`: each rank writes its own host's
#     name into its CSV rows, and the two are different nodes: the emulated links crossed
#     a node boundary over MPI, without a failed transmission or a byte error.
# Then the cluster is taken down and nothing of it may be left.
#
#   slurm_multinode.sh --deployment NAME TOPOLOGY REPORT JOB RUN BUNDLE   (a two-card deployment)
# env: TOOL_SLURMCTLD (the slurm toolchain's controller; the client commands sit beside it),
# TESTKIT_CHECK (tools/testkit/check: topology, job logs, the bench CSV, times)
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=tools/testkit/slurm/slurm_nodes.sh
source "$here/../../tools/testkit/slurm/slurm_nodes.sh"
# shellcheck source=tools/testkit/slurm/slurm_submit.sh
source "$here/../../tools/testkit/slurm/slurm_submit.sh"
: "${TOOL_SLURMCTLD:?TOOL_SLURMCTLD: the slurm toolchain must be given}"
check=$(realpath "${TESTKIT_CHECK:?TESTKIT_CHECK: testkit-check (tools/testkit/check) must be given}")
if [ $# -ne 7 ] || [ "$1" != --deployment ]; then
    echo "usage: $0 --deployment NAME TOPOLOGY REPORT JOB RUN BUNDLE (one two-card deployment)" >&2
    exit 2
fi
name=$2 topology=$3 job=$5
ranks=$("$check" topology devices "$topology")
links=$("$check" topology links "$topology")
if [ "$ranks" -ne 2 ]; then
    echo "slurm_multinode: $name has $ranks devices; this test takes a two-card deployment" >&2
    exit 2
fi

slurm_isolate "$0" "$@"
test_cluster_up 4 3
# Open MPI as it comes: no interface settings (a node has only lo and eth0, and Open MPI
# leaves loopback out when there is another interface); docs/guide.md says when they matter

# 1. four hosts
if submit "srun hostname" "$jobs/hostname.out" -N 4 --ntasks-per-node=1 --wrap 'srun hostname'; then
    got=$(sort "$jobs/hostname.out" | xargs)
    if [ "$got" = "n01 n02 n03 n04" ]; then
        echo "ok   srun hostname: one task on each of n01 n02 n03 n04"
    else
        echo "FAIL srun hostname: want one line from each of n01 n02 n03 n04, got: $got"; fail=1
    fi
else
    fail=1
fi

# 2. the noctua2 request, as the ring deployments ask it (3 cards per node)
noctua=(-p fpga --constraint=xilinx_u280_xrt2.x)
if submit "noctua2 request" "$jobs/noctua2.out" "${noctua[@]}" --gres=fpga:3 -N 4 --ntasks-per-node=3 \
    --wrap 'srun hostname'; then
    got=$(sort "$jobs/noctua2.out" | uniq -c | awk '{print $2 "x" $1}' | xargs)
    if [ "$got" = "n01x3 n02x3 n03x3 n04x3" ]; then
        echo "ok   noctua2 request: ${noctua[*]} --gres=fpga:3 -N 4 --ntasks-per-node=3 ran 3 tasks on each node"
    else
        echo "FAIL noctua2 request: want 3 tasks on each of n01..n04, got: $got"; fail=1
    fi
else
    fail=1
fi
for refused in "--constraint=xilinx_u55c_xrt2.x" "--gres=fpga:4"; do
    if err=$(timeout 30 sbatch --parsable -p fpga "$refused" -N 1 -t 1 --wrap true 2>&1); then
        echo "FAIL refused request: sbatch took -p fpga $refused (job $err), which no node can serve"; fail=1
    else
        echo "ok   refused request: -p fpga $refused: $err"
    fi
done

# 3. the deployment's job script over two nodes: placement and links
# Open MPI prints its map of ranks to nodes (Open MPI 4.1, rmaps_base_display_map)
export OMPI_MCA_rmaps_base_display_map=1
if submit "$name status" "$jobs/status.out" -N 2 --ntasks-per-node=1 "$job" status; then
    log=$jobs/status.out
    bad=0
    placed=$("$check" mpi-map "$log" | tr ' ' @ | xargs) || placed=""
    r0=$(tr ' ' '\n' <<<"$placed" | sed -n 's/^0@//p')
    r1=$(tr ' ' '\n' <<<"$placed" | sed -n 's/^1@//p')
    # the allocation the job script reports (SLURM_JOB_NODELIST), expanded by Slurm
    nodelist=$("$check" job-nodes "$log") || nodelist=""
    allocated=$(scontrol show hostnames "$nodelist" 2>/dev/null | sort -u | xargs)
    if [ -z "$r0" ] || [ -z "$r1" ] || [ "$r0" = "$r1" ] || [ "$(wc -w <<<"$allocated")" -ne 2 ] ||
        [[ " $allocated " != *" $r0 "* ]] || [[ " $allocated " != *" $r1 "* ]]; then
        echo "FAIL $name status: rank 0 and rank 1 are not on the two allocated nodes (Open MPI's map, rank@node: ${placed:-none}; allocation: ${nodelist:-none})"; bad=1
    fi
    # every rank's report, both ends of every link up, no loss, no error
    if ! seen=$("$check" job-status "$log" "$ranks" "$links" 2>&1); then
        echo "FAIL $name status:"; echo "$seen"; bad=1
    fi
    [ $bad -eq 0 ] && echo "ok   $name status: allocation $nodelist, rank 0 on $r0, rank 1 on $r1, $seen"
    fail=$((fail | bad))
else
    fail=1
fi
unset OMPI_MCA_rmaps_base_display_map

# 4. where each rank says it ran, and data over the links between the two nodes
csv=$jobs/bench.csv
if submit "$name bench" "$jobs/bench.out" -N 2 --ntasks-per-node=1 "$job" \
    bench throughput --min-bytes 4096 --max-bytes 4096 --iterations 16 --csv "$csv"; then
    # rank -> the hosts its rows name: one each, and two different ones
    hosts=$("$check" csv-hosts "$csv" | xargs) || hosts=""
    received=$("$check" csv-sum "$csv" rx_count) || received=0
    echo "bench rows: rank host: $hosts; words received: $received"
    if [[ $hosts =~ ^0\ ([^ ]+)\ 1\ ([^ ]+)$ ]] && [ "${BASH_REMATCH[1]}" != "${BASH_REMATCH[2]}" ] &&
        [ "$received" -gt 0 ] && "$check" csv-errors "$csv" failed_transmissions byte_errors; then
        echo "ok   $name bench: each rank wrote its own host into its rows, two different nodes, no loss"
    else
        echo "FAIL $name bench: the ranks' rows in $csv do not come from two different nodes without loss:"
        cat "$csv" || true
        fail=1
    fi
else
    fail=1
fi
jobs_done=$(date +%s.%N)

if [ $fail -ne 0 ]; then
    echo "---- logs of the cluster ($SLURM_DIR/log)"
    tail -n 30 "$SLURM_DIR"/log/* || true
fi
slurm_down_checked "$mounts_before" || fail=1
echo "cluster up in $("$check" elapsed "$start" "$up") s, jobs in $("$check" elapsed "$up" "$jobs_done") s"
exit $fail
