#!/usr/bin/env bash
# probe_version.sh OUT -- CMD [ARGS...] [-- CMD [ARGS...]]...
# Runs each command and writes the command line plus its output to OUT. Toolchains feed OUT
# into their actions as an input, so the tool's version is part of every action key.
set -euo pipefail

out=$1
shift
[ "${1:-}" = "--" ] || { echo "probe_version.sh: usage: OUT -- CMD [ARGS...] [-- CMD...]" >&2; exit 2; }
shift

tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
: >"$tmp"

run_one() {
    if ! command -v "$1" >/dev/null 2>&1; then
        echo "error: \`$1\` is not on PATH (PATH=$PATH)." >&2
        echo "Install it (./forge installs the packages in tools/bootstrap/apt.txt) or point the toolchain at it in toolchains/BUCK." >&2
        exit 3
    fi
    printf '$ %s\n' "$*" >>"$tmp"
    if ! "$@" >>"$tmp" 2>&1; then
        echo "error: \`$*\` failed; its output:" >&2
        cat "$tmp" >&2
        exit 3
    fi
}

cmd=()
for arg in "$@"; do
    if [ "$arg" = "--" ]; then
        run_one "${cmd[@]}"
        cmd=()
    else
        cmd+=("$arg")
    fi
done
[ ${#cmd[@]} -eq 0 ] || run_one "${cmd[@]}"
mv "$tmp" "$out"
trap - EXIT
