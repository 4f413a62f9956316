#!/usr/bin/env bash
# Reproducibility across checkouts, compared the way Bazel compares execution logs:
#
#   tools/checks/repro_check.sh [TARGET]        # default //deploy:mobilenet_2fpga
#
# builds TARGET in this checkout, then in a copy of its files at another path and depth,
# under another umask, time zone, locale and user name, with an empty action cache (so every
# action of the graph runs again there), and compares the two builds' logs with
# `forge log diff`: every action's output digests, and for the first action whose outputs
# differ, a diff of the differing file. Exit code 0 when every output is byte-identical, 1
# when one differs, 3 when a build failed.
#
# The copy shares this checkout's cargo target directory (files are copied with their
# modification times, so cargo finds its work done) and Python environment: both are state
# outside the action graph (rules/cargo.bzl); the actions themselves all run again.
# FORGE_REPRO_KEEP=1 keeps the copy (its path is printed).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
target=${1:-//deploy:mobilenet_2fpga}
forge="$root/forge"

work=$(mktemp -d "${TMPDIR:-/tmp}/forge-repro-XXXXXX")
if [ "${FORGE_REPRO_KEEP:-0}" != 1 ]; then
    trap 'rm -rf "$work"' EXIT
fi
copy="$work/second/checkout/one/level/deeper"
mkdir -p "$copy"

echo "repro_check: building $target in $root" >&2
(cd "$root" && nice "$forge" build "$target" --console simple >&2) || {
    echo "repro_check: the build in $root failed" >&2
    exit 3
}

# The checkout's own files (tracked and new, not ignored), with their modification times.
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
    tar --null --no-recursion -T - -cf -) | (cd "$copy" && tar -xpf -)
for shared in .venv target; do
    rm -rf "${copy:?}/$shared"
    ln -s "$(readlink -f "$root/$shared")" "$copy/$shared"
done

echo "repro_check: building $target again in $copy (umask 077, TZ=Pacific/Chatham, LANG=C.UTF-8, USER=repro)" >&2
(
    cd "$copy"
    umask 077
    export TZ=Pacific/Chatham LANG=C.UTF-8 LC_ALL=C.UTF-8 USER=repro LOGNAME=repro
    nice ./forge build "$target" --console simple >&2
) || {
    echo "repro_check: the build in $copy failed" >&2
    exit 3
}
ran=$( (cd "$copy" && "$root/target/release/forge" log what-ran 2>/dev/null | head -1) || true)
echo "repro_check: second build: ${ran:-?}" >&2

status=0
(cd "$copy" && ./forge log diff "$root" "$copy") || status=$?
if [ "${FORGE_REPRO_KEEP:-0}" = 1 ]; then
    echo "repro_check: the copy is kept at $copy" >&2
fi
exit "$status"
