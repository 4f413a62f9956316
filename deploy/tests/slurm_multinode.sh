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
# env: TOOL_SLURMCTLD (the slurm toolchain's controller; the client commands sit beside it)
set -euo pipefail
here=$(dirname "${BASH_SOURCE[0]}")
# shellcheck source=tools/testkit/slurm/slurm_nodes.sh
source "$here/../../tools/testkit/slurm/slurm_nodes.sh"
# shellcheck source=tools/testkit/slurm/slurm_submit.sh
source "$here/../../tools/testkit/slurm/slurm_submit.sh"
: "${TOOL_SLURMCTLD:?TOOL_SLURMCTLD: the slurm toolchain must be given}"
if [ $# -ne 7 ] || [ "$1" != --deployment ]; then
    echo "usage: $0 --deployment NAME TOPOLOGY REPORT JOB RUN BUNDLE (one two-card deployment)" >&2
    exit 2
fi
name=$2 topology=$3 job=$5
ranks=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["devices"]))' "$topology")
links=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["links"]))' "$topology")
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
    placed=$(awk '/Data for node:/ {node=$4} /Process rank:/ {for (i = 1; i < NF; i++) if ($i == "rank:") print $(i + 1) "@" node}' "$log" | sort | xargs)
    r0=$(tr ' ' '\n' <<<"$placed" | sed -n 's/^0@//p')
    r1=$(tr ' ' '\n' <<<"$placed" | sed -n 's/^1@//p')
    # the allocation the job script reports (SLURM_JOB_NODELIST), expanded by Slurm
    nodelist=$(sed -n 's/^job [0-9]*: 2 rank(s) on \([^:]*\): status$/\1/p' "$log")
    allocated=$(scontrol show hostnames "$nodelist" 2>/dev/null | sort -u | xargs)
    if [ -z "$r0" ] || [ -z "$r1" ] || [ "$r0" = "$r1" ] || [ "$(wc -w <<<"$allocated")" -ne 2 ] ||
        [[ " $allocated " != *" $r0 "* ]] || [[ " $allocated " != *" $r1 "* ]]; then
        echo "FAIL $name status: rank 0 and rank 1 are not on the two allocated nodes (Open MPI's map, rank@node: ${placed:-none}; allocation: ${nodelist:-none})"; bad=1
    fi
    up_ends=$(grep -c 'CORE_STATUS *0x11ff' "$log" || true)
    if [ "$up_ends" -ne $((2 * links)) ]; then
        echo "FAIL $name status: $up_ends link ends report CORE_STATUS 0x11ff, want $((2 * links))"; bad=1
    fi
    seen=$(grep -c '^== fpga[0-9]* (rank [0-9]*' "$log" || true)
    if [ "$seen" -ne "$ranks" ]; then
        echo "FAIL $name status: $seen of $ranks ranks reported"; bad=1
    fi
    if grep -Eq 'OVERFLOW_COUNT +[1-9]|^error|: error' "$log"; then
        echo "FAIL $name status: lost words or an error"; bad=1
    fi
    [ $bad -eq 0 ] && echo "ok   $name status: allocation $nodelist, rank 0 on $r0, rank 1 on $r1, $up_ends link ends up, no loss"
    fail=$((fail | bad))
else
    fail=1
fi
unset OMPI_MCA_rmaps_base_display_map

# 4. where each rank says it ran, and data over the links between the two nodes
csv=$jobs/bench.csv
if submit "$name bench" "$jobs/bench.out" -N 2 --ntasks-per-node=1 "$job" \
    bench throughput --min-bytes 4096 --max-bytes 4096 --iterations 16 --csv "$csv"; then
    if python3 - "$csv" <<'PY'; then
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
hosts = {}
for r in rows:
    hosts.setdefault(r["rank"], set()).add(r["hostname"])
ok = sorted(hosts) == ["0", "1"] and all(len(h) == 1 for h in hosts.values())
ok = ok and hosts["0"] != hosts["1"]
lost = [r for r in rows if r["failed_transmissions"] != "0" or r["byte_errors"] != "0"]
received = sum(int(r["rx_count"]) for r in rows)
print("bench rows:", len(rows), "rank -> host:", {k: sorted(v) for k, v in hosts.items()},
      "words received:", received, "rows with loss:", len(lost))
sys.exit(0 if ok and received > 0 and not lost else 1)
PY
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
python3 -c "import sys; a, b, c = map(float, sys.argv[1:]); print(f'cluster up in {b - a:.1f} s, jobs in {c - b:.1f} s')" "$start" "$up" "$jobs_done"
exit $fail
