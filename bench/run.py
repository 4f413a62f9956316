#!/usr/bin/env python3
"""Benchmarks forge against GNU make on the same synthetic action graph.

For each size N (targets = actions) it generates a workspace with bench/generate.py and
measures, in the same run and on the same machine:
  load     `forge targets //...`          (loading + BUCK evaluation only)
  full     `forge build //...` from clean  vs `make -jJ` from clean
  per-act  full / N                        (the per-action overhead, sandbox + cache included)
  noop     the same build again            vs `make -jJ` again
  edit     one leaf source changed, build again (exactly one action re-runs)
and prints the ratios forge/make. Each command is bounded by --timeout; sizes above
--full-max are measured load-only (said so in the table).

    bench/run.py --forge target/release/forge                 # N = 10 100 1000 10000
    bench/run.py --forge target/release/forge --sizes 10 100 --repeat 3
"""

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402


class Timeout(Exception):
    pass


def timed(cmd, cwd, timeout):
    """Runs cmd, returns wall seconds; raises on failure or timeout."""
    start = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        raise Timeout(" ".join(cmd))
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        tail = proc.stderr.decode(errors="replace")[-2000:]
        raise RuntimeError("%s failed (exit %d) in %s:\n%s" % (" ".join(cmd), proc.returncode, cwd, tail))
    return elapsed


def best(fn, repeat):
    return min(fn() for _ in range(repeat))


def edit_leaf_source(root, packages, per_package):
    """Changes the source of a target nothing depends on: one action must re-run."""
    path = os.path.join(root, "p%d" % (packages - 1), "src", "t%d.txt" % (per_package - 1))
    with open(path, "a") as f:
        f.write("edit %f\n" % time.time())


def measure(forge, size, jobs, timeout, full, repeat, keep, sandbox=None):
    root = tempfile.mkdtemp(prefix="forge-bench-%d-" % size)
    aside = tempfile.mkdtemp(prefix="forge-bench-aside-")
    try:
        n, packages, per_package = generate.generate(root, size)
        forge_build = [forge, "build", "//...", "-j", str(jobs)]
        if sandbox:
            forge_build += ["-c", "forge.sandbox=%s" % sandbox]
        make = ["make", "-s", "-j%d" % jobs, "all"]
        row = {"n": n, "shape": "%dx%d" % (packages, per_package)}
        row["load"] = best(lambda: timed([forge, "targets", "//..."], root, timeout), repeat)
        if not full:
            return row

        def set_aside(name):
            # Moved out of the way, deleted with the workspace at the end: deleting thousands
            # of inodes just before a timed build slows that build's creates (ext4 without a
            # journal scans past every inode deleted in the last ~30 s), which would time the
            # benchmark's own cleanup rather than the engine.
            path = os.path.join(root, name)
            if os.path.exists(path):
                os.rename(path, tempfile.mkdtemp(prefix=name + "-", dir=aside))

        def clean_forge():
            set_aside("buck-out")
            return timed(forge_build, root, timeout)

        def clean_make():
            set_aside("make-out")
            return timed(make, root, timeout)

        row["forge_full"] = best(clean_forge, repeat)
        row["make_full"] = best(clean_make, repeat)
        row["forge_noop"] = best(lambda: timed(forge_build, root, timeout), repeat)
        row["make_noop"] = best(lambda: timed(make, root, timeout), repeat)
        edit_leaf_source(root, packages, per_package)
        row["forge_edit"] = timed(forge_build, root, timeout)
        row["make_edit"] = timed(make, root, timeout)
        return row
    finally:
        if keep:
            print("kept %s" % root, file=sys.stderr)
        else:
            shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(aside, ignore_errors=True)


def fmt(seconds):
    if seconds is None:
        return "-"
    if seconds < 1:
        return "%.0f ms" % (seconds * 1000)
    return "%.2f s" % seconds


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "-"
    return "%.2fx" % (a / b)


def per_action(total, n):
    if total is None:
        return "-"
    return "%.2f ms" % (total * 1000 / n)


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--forge", default="target/release/forge", help="forge binary")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 100, 1000, 10000])
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="-j for both engines")
    parser.add_argument("--full-max", type=int, default=10000,
                        help="largest N that gets full/no-op/edit builds (larger: load only)")
    parser.add_argument("--timeout", type=float, default=900, help="seconds per command")
    parser.add_argument("--repeat", type=int, default=1, help="best of R for load/full/noop")
    parser.add_argument("--keep", action="store_true", help="keep the generated workspaces")
    parser.add_argument("--sandbox", default=None,
                        help="forge's sandbox mode (-c forge.sandbox=...; default: forge's default, bwrap)")
    args = parser.parse_args(argv)

    forge = os.path.abspath(args.forge)
    if not os.access(forge, os.X_OK):
        parser.error("forge binary not found: %s (cargo build --release -p forge)" % forge)
    if shutil.which("make") is None:
        parser.error("GNU make is not on PATH")

    rows = []
    for size in args.sizes:
        full = size <= args.full_max
        print("N=%d ..." % size, file=sys.stderr, flush=True)
        try:
            rows.append(measure(forge, size, args.jobs, args.timeout, full, args.repeat, args.keep,
                                args.sandbox))
        except Timeout as e:
            rows.append({"n": size, "shape": "-", "note": "timeout: %s" % e})
        if not full:
            rows[-1]["note"] = "load only (N > --full-max)"

    header = ["N", "shape", "load", "forge full", "make full", "full ratio",
              "forge/action", "make/action", "forge noop", "make noop", "noop ratio",
              "forge edit leaf", "make edit leaf"]
    table = [header]
    for r in rows:
        n = r["n"]
        table.append([
            str(n), r.get("shape", "-"), fmt(r.get("load")),
            fmt(r.get("forge_full")), fmt(r.get("make_full")), ratio(r.get("forge_full"), r.get("make_full")),
            per_action(r.get("forge_full"), n), per_action(r.get("make_full"), n),
            fmt(r.get("forge_noop")), fmt(r.get("make_noop")), ratio(r.get("forge_noop"), r.get("make_noop")),
            fmt(r.get("forge_edit")), fmt(r.get("make_edit")),
        ])
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    print("-j%d, best of %d, %s" % (args.jobs, args.repeat, time.strftime("%Y-%m-%d")))
    for i, row in enumerate(table):
        print("| " + " | ".join(cell.ljust(widths[j]) for j, cell in enumerate(row)) + " |")
        if i == 0:
            print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    # Growth: time ratio between consecutive sizes divided by the size ratio (1.00 = linear).
    for key, label in (("load", "load"), ("forge_full", "forge full"), ("forge_noop", "forge noop"),
                       ("make_full", "make full"), ("make_noop", "make noop")):
        steps = []
        for a, b in zip(rows, rows[1:]):
            if a.get(key) and b.get(key):
                steps.append("%d->%d: %.2f" % (a["n"], b["n"], (b[key] / a[key]) / (b["n"] / a["n"])))
        if steps:
            print("growth vs linear, %s: %s" % (label, ", ".join(steps)))
    for r in rows:
        if "note" in r:
            print("N=%d: %s" % (r["n"], r["note"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
