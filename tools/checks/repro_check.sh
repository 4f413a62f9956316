#!/usr/bin/env bash
# Reproducibility across checkouts, compared the way Bazel compares execution logs:
#
#   tools/checks/repro_check.sh [--in-copies] [--work DIR] [--remote-cache FILE] [TARGET]
#                                                          # default //deploy:mobilenet_2fpga
#
# builds TARGET in this checkout, then in a copy of its files at another path and depth,
# under another umask, time zone, locale and user name, with an empty action cache (so every
# action of the graph runs again there), and compares the two builds' logs with
# `forge log diff`: every action's output digests, and for the first action whose outputs
# differ, a diff of the differing file. Exit code 0 when every output is byte-identical, 1
# when one differs, 3 when a build failed.
#
# --in-copies builds the first one in a copy too, whose action cache is this checkout's
# (hard links: its entries are read-only and replaced only by rename), so nothing here is
# written: how the test suite runs it (//deploy:caching's empty-cache scenario, after
# building TARGET).
#
# --work DIR builds the copies in DIR (created; it must not exist) and keeps them: the first
# in DIR/first, the second in DIR/second/checkout/one/level/deeper.
# --remote-cache FILE gives the second copy FILE as its `.buckconfig.local` (a
# `[buck2_re_client]` section naming a remote cache, as the guide's users write it) and builds
# it with `-c ci.remote_cache=true`: its empty-cache build then also uploads every result the
# rules let the cache share, so a caller can go on from that copy (//deploy:caching's
# `forge clean` scenario does) instead of running every action a second time.
#
# The copies share this checkout's cargo target directory (files are copied with their
# modification times, so cargo finds its work done) and Python environments: both are state
# outside the action graph (rules/cargo.bzl); the actions themselves all run again.
# FORGE_REPRO_KEEP=1 keeps the copies (their path is printed).
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
in_copies=0
work=
remote_cache=
usage="usage: $0 [--in-copies] [--work DIR] [--remote-cache FILE] [TARGET]"
while [ $# -gt 0 ]; do
    case $1 in
    --in-copies) in_copies=1 ;;
    --work)
        work=${2:?$usage}
        shift
        ;;
    --remote-cache)
        remote_cache=$(readlink -f "${2:?$usage}")
        [ -f "$remote_cache" ] || {
            echo "repro_check: --remote-cache $2: no such file" >&2
            exit 3
        }
        shift
        ;;
    -*)
        echo "repro_check: unknown option $1; $usage" >&2
        exit 3
        ;;
    *) break ;;
    esac
    shift
done
target=${1:-//deploy:mobilenet_2fpga}

if [ -n "$work" ]; then
    # the caller goes on from the copies: they stay
    mkdir "$work" || exit 3
    work=$(cd "$work" && pwd -P)
    FORGE_REPRO_KEEP=1
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/forge-repro-XXXXXX")
fi
if [ "${FORGE_REPRO_KEEP:-0}" != 1 ]; then
    trap 'rm -rf "$work"' EXIT
fi

# copy_checkout DIR: the checkout's own files (tracked and new, not ignored), with their
# modification times, and its shared state outside the graph linked in.
copy_checkout() {
    mkdir -p "$1"
    (cd "$root" && git ls-files -z --cached --others --exclude-standard |
        tar --format=posix --null --no-recursion -T - -cf -) | (cd "$1" && tar -xpf -)
    for shared in .venv .node target; do
        rm -rf "${1:?}/$shared"
        [ ! -e "$root/$shared" ] || ln -s "$(readlink -f "$root/$shared")" "$1/$shared"
    done
}

first=$root
if [ $in_copies -eq 1 ]; then
    first="$work/first"
    copy_checkout "$first"
    mkdir -p "$first/buck-out/forge/cache"
    for part in cas ac; do
        [ -d "$root/buck-out/forge/cache/$part" ] || {
            echo "repro_check: $root has no action cache to start the first copy from; build $target there first" >&2
            exit 3
        }
        cp -al "$root/buck-out/forge/cache/$part" "$first/buck-out/forge/cache/$part"
    done
fi
copy="$work/second/checkout/one/level/deeper"
copy_checkout "$copy"
remote_args=()
if [ -n "$remote_cache" ]; then
    cp "$remote_cache" "$copy/.buckconfig.local"
    remote_args=(-c ci.remote_cache=true)
fi

echo "repro_check: building $target in $first" >&2
# the copies skip the package and venv steps: what they would install is this checkout's
skip=$in_copies
(cd "$first" && FORGE_SKIP_BOOTSTRAP=$skip nice ./forge build "$target" --console simple >&2) || {
    echo "repro_check: the build in $first failed" >&2
    exit 3
}

echo "repro_check: building $target again in $copy (umask 077, TZ=Pacific/Chatham, LANG=C.UTF-8, USER=repro)" >&2
(
    cd "$copy"
    umask 077
    export TZ=Pacific/Chatham LANG=C.UTF-8 LC_ALL=C.UTF-8 USER=repro LOGNAME=repro
    FORGE_SKIP_BOOTSTRAP=1 nice ./forge build "${remote_args[@]}" "$target" --console simple >&2
) || {
    echo "repro_check: the build in $copy failed" >&2
    exit 3
}
ran=$( (cd "$copy" && FORGE_SKIP_BOOTSTRAP=1 ./forge log what-ran 2>/dev/null | head -1) || true)
echo "repro_check: second build: ${ran:-?}" >&2

status=0
(cd "$copy" && FORGE_SKIP_BOOTSTRAP=1 ./forge log diff "$first" "$copy") || status=$?
if [ "${FORGE_REPRO_KEEP:-0}" = 1 ]; then
    echo "repro_check: the copies are kept in $work" >&2
fi
exit "$status"
