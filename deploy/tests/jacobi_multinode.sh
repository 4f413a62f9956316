#!/usr/bin/env bash
# The jacobi ring across nodes: a throwaway 2-node cluster (slurm_nodes.sh: each node its
# own network and UTS namespace, its own slurmd) takes the deployment's `local` job script as
# written (-N 2 --ntasks-per-node=2 from its cards_per_node = 2), running
# `run --rows 8 --cols 64 --iterations 6`: Open MPI's map puts ranks 0 and 1 on one node of
# the allocation and ranks 2 and 3 on the other (fpga0/fpga1 on node 0, fpga2/fpga3 on
# node 1, as the description places them), so the cables fpga1-fpga2 and fpga3-fpga0 cross
# the node boundary; the result is bit-exact against the whole-grid reference and no link
# lost a word. Then the cluster is taken down and nothing of it may be left.
#
#   jacobi_multinode.sh --deployment NAME TOPOLOGY REPORT JOB RUN BUNDLE   (the jacobi ring)
# env: TOOL_SLURMCTLD (the slurm toolchain's controller; the client commands sit beside it),
# TESTKIT_CHECK (tools/testkit/check: topology, job logs, times), PYTHON (the python toolchain)
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/testkit/slurm/slurm_nodes.sh
source "$here/../../tools/testkit/slurm/slurm_nodes.sh"
# shellcheck source=tools/testkit/slurm/slurm_submit.sh
source "$here/../../tools/testkit/slurm/slurm_submit.sh"
: "${TOOL_SLURMCTLD:?TOOL_SLURMCTLD: the slurm toolchain must be given}"
check=$(realpath "${TESTKIT_CHECK:?TESTKIT_CHECK: testkit-check (tools/testkit/check) must be given}")
if [ $# -ne 7 ] || [ "$1" != --deployment ]; then
    echo "usage: $0 --deployment NAME TOPOLOGY REPORT JOB RUN BUNDLE (the jacobi ring)" >&2
    exit 2
fi
name=$2 topology=$(realpath "$3") job=$(realpath "$5")
nodes=$("$check" topology nodes "$topology")
if [ "$nodes" -ne 2 ]; then
    echo "jacobi_multinode: $name spans $nodes nodes; this test's cluster has 2" >&2
    exit 2
fi

slurm_isolate "$0" "$@"
test_cluster_up 2 2
# Open MPI prints its map of ranks to nodes (Open MPI 4.1, rmaps_base_display_map)
export OMPI_MCA_rmaps_base_display_map=1

out=$jobs/run
# submit_retried: again after an Open MPI connect failure (docs/limits.md)
if submit_retried "$name run" "$out.out" "$job" run --rows 8 --cols 64 --iterations 6 --json "$out.json"; then
    nodelist=$("$check" job-nodes "$out.out")
    allocated=$(scontrol show hostnames "$nodelist" 2>/dev/null | xargs)
    if "${PYTHON:?PYTHON: the python toolchain must be given}" - "$out.out" "$out.json" "$allocated" <<'PY'; then
import json, re, sys
log, path, allocated = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3].split()
# Open MPI's map: "Data for node: n01 ..." then "[...] Process rank: 0 ..." lines
node, placed = None, {}
for line in log.splitlines():
    m = re.search(r"Data for node: (\S+)", line)
    if m:
        node = m.group(1)
    m = re.search(r"Process rank: (\d+)", line)
    if m and node:
        placed[int(m.group(1))] = node
o = json.load(open(path))
bad = []
if len(allocated) != 2:
    bad.append(f"allocation {allocated}, want 2 nodes")
if sorted(placed) != [0, 1, 2, 3]:
    bad.append(f"Open MPI's map has ranks {sorted(placed)}")
elif not (placed[0] == placed[1] != placed[2] == placed[3] and set(placed.values()) == set(allocated)):
    bad.append(f"ranks not 2 per node in card order: {placed} (allocation {allocated})")
if not o["bit_exact"]:
    bad.append(f"not bit-exact: {o['mismatches']} cells differ")
ports = [(c["device"], p) for c in o["per_card"] for p in c["ports"]]
words = 6 * 64 // 16
for dev, p in ports:
    if (p["tx_words"], p["rx_words"]) != (words, words) or p["rx_overflow"] or p["frames_with_errors"]:
        bad.append(f"{dev} port {p['port']}: tx {p['tx_words']} rx {p['rx_words']} (want {words}), "
                   f"overflow {p['rx_overflow']}, frames with errors {p['frames_with_errors']}")
for b in bad:
    print("FAIL", b)
if not bad:
    print(f"ranks on nodes {placed}; bit-exact ({o['cells']} cells); {words} words each way on all "
          f"{len(ports)} ports, none lost")
sys.exit(1 if bad else 0)
PY
        echo "ok   $name run over 2 nodes: ranks 0,1 and 2,3 on the two allocated nodes ($allocated), bit-exact, no loss"
    else
        echo "FAIL $name run over 2 nodes (log: above)"
        fail=1
    fi
else
    fail=1
fi
unset OMPI_MCA_rmaps_base_display_map
jobs_done=$(date +%s.%N)

if [ $fail -ne 0 ]; then
    echo "---- logs of the cluster ($SLURM_DIR/log)"
    tail -n 30 "$SLURM_DIR"/log/* || true
fi
slurm_down_checked "$mounts_before" || fail=1
echo "cluster up in $("$check" elapsed "$start" "$up") s, the job in $("$check" elapsed "$up" "$jobs_done") s"
exit $fail
