"""Checks one `bench` job of a ring deployment against the description's own facts.

  ring_check.py --topology T --nodes "n01 n02 ..." --log L --csv C --hops H --size S --iterations N

- placement: Open MPI's map (rmaps_base_display_map in the job's log) and the host each rank
  wrote into the hops file put rank r on the allocation's node number `node` of device r in
  topology.json (the job script's -N / --ntasks-per-node), so many ranks per node as the
  description has cards per node;
- CPU: the launcher's line of every rank's CPU time (printed when all ranks finished);
- payload: the benchmarking card's CSV rows have no byte error and received S * N / 64 words
  (64 B stream words), after as many hops as the ring has cards;
- counters: every cable of topology.json, in both directions, has a hop entry whose
  receiving end counted S * N / 64 words and whose sending end transmitted as many, and no
  end lost a word (FIFO_RX_OVERFLOW_COUNT 0);
- page (--page, the ring.html the job wrote): one card per device of topology.json, each on
  its device's node, one drawn cable direction and one table row per cable direction, and
  the ring's shape (cards, nodes) as the topology has it.
Prints one `ok` or `FAIL` line per check; exit 1 on any failure.
"""

import argparse
import csv
import json
import re
import sys
from collections import Counter

WORD_BYTES = 64


def main() -> int:
    ap = argparse.ArgumentParser()
    for a in ("--topology", "--nodes", "--log", "--csv", "--hops", "--label"):
        ap.add_argument(a, required=True)
    ap.add_argument("--page")
    ap.add_argument("--size", type=int, required=True)
    ap.add_argument("--iterations", type=int, required=True)
    a = ap.parse_args()
    topo = json.load(open(a.topology))
    nodes = a.nodes.split()
    devices = {d["rank"]: d for d in topo["devices"]}
    fails = []

    def check(ok: bool, what: str) -> None:
        print(("ok   " if ok else "FAIL ") + f"{a.label}: {what}")
        if not ok:
            fails.append(what)

    # placement, from Open MPI's map
    placed, node = {}, None
    for line in open(a.log, errors="replace"):
        m = re.search(r"Data for node: (\S+)", line)
        if m:
            node = m.group(1)
        for r in re.findall(r"Process rank: (\d+)", line):
            placed[int(r)] = node
    want = {r: nodes[d["node"]] for r, d in devices.items()}
    check(placed == want, f"Open MPI's map puts every rank on its device's node {sorted(placed.items()) if placed != want else ''}".rstrip())
    per_node = Counter(want.values())
    check(
        set(per_node.values()) == {topo["cards_per_node"]} and len(per_node) == topo["nodes"],
        f"{topo['cards_per_node']} ranks on each of the {topo['nodes']} nodes {dict(per_node)}",
    )
    cpu = re.search(r"aurora-host: (\d+) ranks used ([\d.]+) s of CPU \(([\d.]+) s per rank", open(a.log, errors="replace").read())
    check(
        cpu is not None and int(cpu[1]) == len(devices),
        f"every rank reported its CPU time: {cpu[2] + ' s in all, ' + cpu[3] + ' s per rank' if cpu else 'no CPU line'}",
    )
    samples = json.load(open(a.hops))
    hosts = {h["rank"]: h["host"] for s in samples for h in s["hops"]}
    check(hosts == want, "each rank's own hostname is its device's node")

    # payload back at the benchmarking card
    words = a.size * a.iterations // WORD_BYTES
    rows = list(csv.DictReader(open(a.csv)))
    check(len(rows) == 2, f"{len(rows)} CSV rows (want one per receiving port of fpga0)")
    for r in rows:
        check(
            r["byte_errors"] == "0" and r["failed_transmissions"] == "0" and int(r["rx_count"]) == words,
            f"{r['config']}: {r['rx_count']} words back (want {words}), byte errors {r['byte_errors']}",
        )
    for s in samples:
        for lane in s["lanes"]:
            check(
                lane["hops"] == len(devices) and lane["byte_errors"] == 0,
                f"{lane['origin']} -> {lane['receiver']}: {lane['hops']} hops (want {len(devices)}), bit-exact",
            )

    # every cable, both directions: TX of one end = RX of the other, nothing lost
    for s in samples:
        by_end = {(h["device"], h["port"]): h for h in s["hops"]}
        bad = []
        for link in topo["links"]:
            for x, y in (("a", "b"), ("b", "a")):
                src, dst = link[x], link[y]
                rx = by_end.get((dst["device"], dst["port"]))
                tx = by_end.get((src["device"], src["port"]))
                name = f"{src['device']}:{src['port']} -> {dst['device']}:{dst['port']}"
                if rx is None or tx is None or rx["from"] != f"{src['device']}:{src['port']}":
                    bad.append(f"{name}: no hop entry")
                elif not (tx["tx_count"] == rx["rx_count"] == words and rx["rx_overflow"] == 0):
                    bad.append(f"{name}: TX {tx['tx_count']} RX {rx['rx_count']} overflow {rx['rx_overflow']}")
        check(
            not bad and len(s["hops"]) == 2 * len(topo["links"]),
            f"{s['message_size']} B: {2 * len(topo['links'])} cable directions, TX = RX = {words} words, no overflow {bad[:3] if bad else ''}".rstrip(),
        )

    if a.page:
        page = open(a.page, errors="replace").read()
        cards = dict(re.findall(r'class="ring-card" data-device="([^"]+)" data-node="([^"]+)"', page))
        want_cards = {d["name"]: want[r] for r, d in devices.items()}
        check(cards == want_cards, f"the page draws the {len(want_cards)} cards, each on its node")
        directions = 2 * len(topo["links"])
        drawn = len(re.findall(r'class="ring-hop"', page))
        rows = len(re.findall(r'<tr class="hop"', page))
        check(
            drawn == directions and rows == directions * len(samples),
            f"the page draws {drawn} cable directions (want {directions}), {rows} hop rows",
        )
        shape = re.search(r'data-cards="(\d+)" data-nodes="(\d+)"', page)
        check(
            shape is not None and (int(shape[1]), int(shape[2])) == (len(devices), topo["nodes"]),
            f"the page names the ring's shape: {shape[0] if shape else 'none'}",
        )
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
