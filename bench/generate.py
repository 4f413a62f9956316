#!/usr/bin/env python3
"""Generates a synthetic Buck2 workspace and the same action graph as a Makefile.

The graph: P packages with M targets each (N = P * M). Inside a package the targets form a
chain (t1 depends on t0, ...). Across packages the chains form a binary tree: the head of
package p depends on the tail of package (p - 1) // 2, so chains run in parallel and fan out
(each package tail feeds two package heads).

Every target is one trivial run action, identical under both engines:
    /bin/sh -c 'cat "$@" | cksum > "$0"' OUT SRC DEP_OUTPUTS...
so the outputs of forge (buck-out/...) and of make (make-out/...) are byte-identical, which
the smoke test checks.
"""

import argparse
import math
import os
import sys

ACTION_SCRIPT = 'cat "$@" | cksum > "$0"'

BUCKCONFIG = """[cells]
  root = .
  prelude = prelude

[buildfile]
  name = BUCK
"""

RULES = '''def _step_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output(ctx.label.name + ".out")
    inputs = [ctx.attrs.src] + [dep[DefaultInfo].default_outputs[0] for dep in ctx.attrs.deps]
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", %r, out.as_output(), inputs),
        category = "step",
    )
    return [DefaultInfo(default_output = out)]

step = rule(
    impl = _step_impl,
    attrs = {
        "deps": attrs.list(attrs.dep(), default = []),
        "src": attrs.source(),
    },
)
''' % ACTION_SCRIPT


def shape(targets, packages):
    """Returns (P, M) with P * M == targets: P defaults to the largest divisor <= sqrt(N)."""
    if packages is None:
        packages = max(d for d in range(1, int(math.isqrt(targets)) + 1) if targets % d == 0)
    packages = max(1, min(packages, targets))
    per_package = max(1, targets // packages)
    return packages, per_package


def graph(packages, per_package):
    """Yields (package, name, src, deps) with deps as (package, name) pairs, in build order."""
    for p in range(packages):
        pkg = "p%d" % p
        for j in range(per_package):
            name = "t%d" % j
            if j > 0:
                deps = [(pkg, "t%d" % (j - 1))]
            elif p > 0:
                deps = [("p%d" % ((p - 1) // 2), "t%d" % (per_package - 1))]
            else:
                deps = []
            yield pkg, name, "src/%s.txt" % name, deps


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def generate(out, targets, packages=None):
    packages, per_package = shape(targets, packages)
    write(os.path.join(out, ".buckroot"), "")
    write(os.path.join(out, ".buckconfig"), BUCKCONFIG)
    write(os.path.join(out, "prelude", "prelude.bzl"), "# Intentionally empty.\n")
    write(os.path.join(out, "rules", "bench.bzl"), RULES)

    by_package = {}
    make_rules = []
    outputs = []
    for pkg, name, src, deps in graph(packages, per_package):
        write(os.path.join(out, pkg, src), "%s:%s\n" % (pkg, name))
        by_package.setdefault(pkg, []).append((name, src, deps))
        target_out = "make-out/%s/%s.out" % (pkg, name)
        dep_outs = ["make-out/%s/%s.out" % d for d in deps]
        prereqs = " ".join(["%s/%s" % (pkg, src)] + dep_outs)
        make_rules.append(
            "%s: %s\n\t@mkdir -p $(@D)\n\t@/bin/sh -c '%s' $@ $^\n"
            % (target_out, prereqs, ACTION_SCRIPT.replace("$", "$$"))
        )
        outputs.append(target_out)

    for pkg, entries in by_package.items():
        lines = ['load("//rules:bench.bzl", "step")', ""]
        for name, src, deps in entries:
            dep_labels = [
                (":%s" % n) if p == pkg else ("//%s:%s" % (p, n)) for p, n in deps
            ]
            lines.append("step(")
            lines.append('    name = "%s",' % name)
            if dep_labels:
                lines.append("    deps = [%s]," % ", ".join('"%s"' % d for d in dep_labels))
            lines.append('    src = "%s",' % src)
            lines.append('    visibility = ["PUBLIC"],')
            lines.append(")")
            lines.append("")
        write(os.path.join(out, pkg, "BUCK"), "\n".join(lines))

    makefile = [
        "# Generated: the same action graph as the BUCK files next to it.",
        ".PHONY: all",
        "all: %s" % " ".join(outputs),
        "",
    ] + make_rules
    write(os.path.join(out, "Makefile"), "\n".join(makefile))
    return packages * per_package, packages, per_package


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--targets", type=int, required=True, help="total number of targets N")
    parser.add_argument("--packages", type=int, help="number of packages P (default sqrt(N))")
    parser.add_argument("--out", required=True, help="directory to generate into")
    args = parser.parse_args(argv)
    if args.targets < 1:
        parser.error("--targets must be at least 1")
    n, p, m = generate(args.out, args.targets, args.packages)
    print("generated %d targets (%d packages x %d) in %s" % (n, p, m, args.out), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
