#!/usr/bin/env bash
# Runs COMMAND and fails when it left new entries in the temporary directory (TMPDIR, or
# /tmp): what .ci/run wraps the suite in, so that `./forge test //...` provably leaves /tmp as
# it found it. forge gives every test a private TMPDIR and fails a test that leaves something
# there (docs/guide.md, "Testing"); this catches what is made outside it (a path under /tmp
# written in full, a daemon a test left running). Only entries that were not there before
# count, so run it where nothing else writes to the directory meanwhile (CI).
#
#   tools/checks/tmp_unchanged.sh COMMAND [ARG]...
# Exit: COMMAND's status when it failed, 1 when it left something, else 0.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: $0 COMMAND [ARG]..." >&2; exit 2; }
tmp=${TMPDIR:-/tmp}
# the listings stay in variables: a file for them would itself be an entry of $tmp
list() { (cd "$tmp" && LC_ALL=C find . -mindepth 1 -maxdepth 1 -printf '%P\n' | LC_ALL=C sort); }
before=$(list)
status=0
"$@" || status=$?
new=$(LC_ALL=C comm -13 <(printf '%s\n' "$before") <(list) | sed '/^$/d')
if [ -n "$new" ]; then
    echo "tmp_unchanged: \`$*\` left $(printf '%s\n' "$new" | wc -l) new entries in $tmp:" >&2
    while IFS= read -r name; do
        ls -ld "$tmp/$name" >&2 || true
    done <<<"$new"
    [ "$status" -ne 0 ] || status=1
fi
exit "$status"
