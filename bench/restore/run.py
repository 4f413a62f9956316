#!/usr/bin/env python3
"""Restore time of a 100 MB artifact, side by side in one run:

  local   forge's local cache (build once, delete the output, rebuild: restored from
          buck-out/forge/cache)
  remote  BuildGrid on loopback (fresh buck-out, same server)
  cp      plain `cp` of the same file on the same filesystem

and the per-action sandbox overhead with bubblewrap and with the symlink forest.

Every forge figure is a whole `forge build` (process start, loading, analysis, keys, the
restore). `net` subtracts the median of a no-op build of the same workspace (outputs present
and current), which leaves the restore itself. Medians over --reps runs; page cache warm for
all three (the file was just written), so the comparison is fair.

forge has no command-line switch for the sandbox; `detect()` takes the first `bwrap` on PATH,
so the symlink-forest figures put a `bwrap` that fails its self-test first on PATH.

Usage: bench/restore/run.py [--forge target/release/forge] [--bgd .venv/buildgrid/bin/bgd]
                            [--grid target/release/forge-re-grid]
                            [--size-mb 100] [--reps 5] [--actions 40]
"""

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CFG = "1ef78538d8598cb2"

RULES = """\
def _big_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("big.bin")
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", "head -c {size} /dev/urandom > \\"$0\\"", out.as_output()),
        category = "big",
        local_only = True,
        allow_cache_upload = True,
    )
    return [DefaultInfo(default_output = out)]

big = rule(impl = _big_impl, attrs = {{}})

def _tiny_impl(ctx: AnalysisContext) -> list[Provider]:
    outs = []
    for i in range(ctx.attrs.count):
        o = ctx.actions.declare_output("t{{}}.txt".format(i))
        ctx.actions.run(
            cmd_args("/bin/sh", "-c", "echo \\"$1\\" > \\"$0\\"", o.as_output(), str(i)),
            category = "tiny",
            identifier = str(i),
        )
        outs.append(o)
    return [DefaultInfo(default_outputs = outs)]

tiny = rule(impl = _tiny_impl, attrs = {{"count": attrs.int()}})
"""


class BuildGrid:
    """A cache-only BuildGrid on 127.0.0.1: `forge-re-grid serve --cache-only` (engine/grid),
    the project's one BuildGrid configuration."""

    def __init__(self, grid, bgd, workdir):
        self.proc = subprocess.Popen(
            [str(grid), "serve", "--cache-only", "--bgd", str(bgd), "--dir", str(workdir)],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, start_new_session=True)
        address = self.proc.stdout.readline().decode().strip()
        if not address:
            sys.exit(f"forge-re-grid serve exited ({self.proc.wait()}); see {workdir}")
        self.port = int(address.rsplit(":", 1)[1])

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait()


def make_workspace(path, port, size, actions):
    (path / "rules").mkdir(parents=True)
    (path / "pkg").mkdir()
    (path / ".buckroot").write_text("")
    re_client = f"[buck2_re_client]\n  address = grpc://127.0.0.1:{port}\n  tls = false\n" if port else ""
    (path / ".buckconfig").write_text(
        f"[cells]\n  root = .\n\n[buildfile]\n  name = BUCK\n\n{re_client}")
    (path / "rules/defs.bzl").write_text(RULES.format(size=size))
    (path / "pkg/BUCK").write_text(
        'load("//rules:defs.bzl", "big", "tiny")\n\n'
        'big(name = "big")\n\n'
        f'tiny(\n    name = "tiny",\n    count = {actions},\n)\n')


def forge(binary, ws, args, env=None, expect=None):
    t = time.perf_counter()
    r = subprocess.run([str(binary), *args], cwd=ws, env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    dt = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit(f"forge {' '.join(args)} failed:\n{r.stderr}")
    if expect and expect not in r.stderr:
        sys.exit(f"forge {' '.join(args)}: expected `{expect}` in:\n{r.stderr}")
    return dt


def median_of(reps, prepare, run):
    times = []
    for _ in range(reps):
        prepare()
        times.append(run())
    return statistics.median(times)


def fmt(s):
    return f"{s * 1000:8.1f} ms"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    default_forge = ROOT / "target/release/forge"
    if not default_forge.exists():
        default_forge = ROOT / "target/debug/forge"
    ap.add_argument("--forge", type=Path, default=default_forge)
    ap.add_argument("--bgd", type=Path, default=ROOT / ".venv/buildgrid/bin/bgd")
    default_grid = default_forge.with_name("forge-re-grid")
    ap.add_argument("--grid", type=Path, default=default_grid)
    ap.add_argument("--size-mb", type=int, default=100)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--actions", type=int, default=40)
    a = ap.parse_args()
    if not a.forge.exists():
        sys.exit(f"{a.forge} does not exist: cargo build --release -p forge")
    if not a.grid.exists():
        sys.exit(f"{a.grid} does not exist: cargo build --release -p forge-re-grid")
    if not a.bgd.exists():
        sys.exit(f"{a.bgd} does not exist: ./forge creates it (tools/bootstrap/python/buildgrid)")
    size = a.size_mb * 1_000_000
    forge_bin = a.forge.resolve()
    load = os.getloadavg()[0]
    print(f"forge: {forge_bin}\nartifact: {a.size_mb} MB, {a.reps} runs each (medians), "
          f"{os.cpu_count()} cores, load average {load:.1f} at start\n")

    with tempfile.TemporaryDirectory(prefix="forge-restore-bench-") as tmp:
        tmp = Path(tmp)
        (tmp / "server").mkdir()
        server = BuildGrid(a.grid.resolve(), a.bgd, tmp / "server")
        try:
            ws = tmp / "ws"
            make_workspace(ws, server.port, size, a.actions)
            out = ws / f"buck-out/forge/art/root/{CFG}/pkg/__big__/big.bin"
            build = ["build", "//pkg:big"]

            # First build: runs locally, fills the local cache and uploads to BuildGrid.
            forge(forge_bin, ws, build, expect="local: 1")
            assert out.stat().st_size == size
            noop = median_of(a.reps, lambda: None, lambda: forge(forge_bin, ws, build))

            local = median_of(a.reps, lambda: out.unlink(),
                              lambda: forge(forge_bin, ws, build, expect="cached: 1"))

            # A fresh buck-out: no local cache, so the blob comes from BuildGrid.
            def wipe():
                shutil.rmtree(ws / "buck-out")
            remote = median_of(a.reps, wipe,
                               lambda: forge(forge_bin, ws, build, expect="cached: 1"))
            # Approximation: a fresh buck-out also re-reads the workspace and re-hashes the
            # (tiny) inputs, which the warm no-op does not; both are small next to 100 MB.
            fresh_noop = noop

            src = tmp / "copy-src.bin"
            shutil.copyfile(out, src)
            dst = tmp / "copy-dst.bin"

            def rm_dst():
                if dst.exists():
                    dst.unlink()

            def cp():
                t = time.perf_counter()
                subprocess.run(["cp", str(src), str(dst)], check=True)
                return time.perf_counter() - t
            cp_t = median_of(a.reps, rm_dst, cp)
        finally:
            server.stop()

        print(f"{'restore of ' + str(a.size_mb) + ' MB':28} {'whole build':>11}  {'net':>11}  {'net / cp':>8}")
        print(f"{'no-op build (subtracted)':28} {fmt(noop)}")
        for name, t, base in [("local cache", local, noop), ("BuildGrid (loopback)", remote, fresh_noop)]:
            net = t - base
            rate = f"  ({a.size_mb / net:.0f} MB/s)" if net > 0 else ""
            print(f"{name:28} {fmt(t)}  {fmt(net)}  {net / cp_t:7.2f}x{rate}")
        print(f"{'cp':28} {fmt(cp_t)}  {fmt(cp_t)}  {1:7.2f}x")
        print(f"goal: local <= 1.5x cp -> {'met' if (local - noop) <= 1.5 * cp_t else 'NOT met'}"
              f" (whole build / cp = {local / cp_t:.2f}x)\n")

        # Sandbox overhead per action: N trivial independent actions, -j1, no cache.
        fake = tmp / "no-bwrap"
        fake.mkdir()
        (fake / "bwrap").write_text("#!/bin/sh\nexit 1\n")
        (fake / "bwrap").chmod(0o755)
        sb = tmp / "sandbox-ws"
        make_workspace(sb, None, 1, a.actions)
        tiny = ["build", "//pkg:tiny", "-j1", "--remote-cache=off"]
        env_forest = dict(os.environ, PATH=f"{fake}:{os.environ['PATH']}")
        results = {}
        for name, env in [("bubblewrap", None), ("symlink-forest", env_forest)]:
            def clean():
                shutil.rmtree(sb / "buck-out", ignore_errors=True)
            full = median_of(a.reps, clean,
                             lambda: forge(forge_bin, sb, tiny, env=env, expect=f"local: {a.actions}"))
            log = subprocess.run([str(forge_bin), "log", "what-ran"], cwd=sb, capture_output=True, text=True).stdout
            nop = median_of(a.reps, lambda: None, lambda: forge(forge_bin, sb, tiny, env=env))
            results[name] = ((full - nop) / a.actions, log.splitlines()[0] if log else "")
        have_bwrap = shutil.which("bwrap") is not None
        print(f"sandbox overhead per action ({a.actions} x `echo > out`, -j1, clean buck-out minus no-op):")
        for name, (per, first) in results.items():
            print(f"  {name:16} {per * 1000:7.2f} ms/action   [{first}]")
        if not have_bwrap:
            print("  (bwrap is not installed: both rows used the symlink forest)")


if __name__ == "__main__":
    main()
