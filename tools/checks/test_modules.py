#!/usr/bin/env python3
"""Every integration-test file of every workspace member is compiled: a top-level
`tests/X.rs` is a test target of its crate, or a module (`mod X;`) of one of them.

Why: the project's crates with several integration-test files gather them into one test
executable (`autotests = false`, `[[test]] name = "all" path = "tests/all.rs"`, whose `mod`
lines name each file), so the crate and its dependencies are linked once, not once per file
(docs/benchmarks.md, "One test executable per crate"). cargo then no longer finds a new file
by itself: a `tests/new.rs` that nobody names is never compiled, and its tests silently never
run. This check fails naming such a file and the line to add.

  python3 tools/checks/test_modules.py [--root DIR]     exit 1 naming every orphan
"""

import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
MOD = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([A-Za-z_][A-Za-z0-9_]*)\s*;", re.M)


def members(root):
    """(package name, manifest dir, test targets' root files) of each workspace member."""
    cargo = os.environ.get("CARGO", "cargo")
    out = subprocess.run(
        [cargo, "metadata", "--no-deps", "--offline", "--format-version", "1"],
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    for pkg in json.loads(out)["packages"]:
        roots = [t["src_path"] for t in pkg["targets"] if "test" in t["kind"]]
        yield pkg["name"], os.path.dirname(pkg["manifest_path"]), roots


def orphans(name, crate_dir, roots):
    """Top-level tests/*.rs of the crate that no test target compiles."""
    tests = os.path.join(crate_dir, "tests")
    if not os.path.isdir(tests):
        return []
    reached = {os.path.realpath(r) for r in roots}
    for r in roots:
        if os.path.dirname(os.path.realpath(r)) != os.path.realpath(tests):
            continue
        with open(r, encoding="utf-8") as f:
            for m in MOD.finditer(f.read()):
                reached.add(os.path.realpath(os.path.join(tests, m.group(1) + ".rs")))
    found = []
    for entry in sorted(os.listdir(tests)):
        path = os.path.realpath(os.path.join(tests, entry))
        if entry.endswith(".rs") and path not in reached:
            found.append(os.path.join(tests, entry))
    return found


def main(argv):
    root = ROOT
    if argv[:1] == ["--root"] and len(argv) == 2:
        root = os.path.realpath(argv[1])
    elif argv:
        sys.exit(__doc__.strip().splitlines()[-1].strip())
    bad = 0
    for name, crate_dir, roots in members(root):
        gathered = [r for r in roots if os.path.basename(r) == "all.rs"]
        for path in orphans(name, crate_dir, roots):
            rel = os.path.relpath(path, root)
            mod = os.path.basename(path)[:-3]
            where = (
                f"add `mod {mod};` to {os.path.relpath(gathered[0], root)}"
                if gathered
                else f"add a [[test]] for it to {os.path.relpath(crate_dir, root)}/Cargo.toml"
            )
            print(f"{rel}: crate {name} never compiles this test file; {where}", file=sys.stderr)
            bad += 1
    if bad:
        sys.exit(1)


if __name__ == "__main__":
    main(sys.argv[1:])
