#!/usr/bin/env bash
# shellcheck disable=SC2016 # the commands' $TMPDIR is the one they see, expanded by them
# tools/checks/tmp_unchanged.sh, on a temporary directory of this test's own: a command that
# leaves nothing passes, one that leaves entries fails naming them, a failing command's status
# comes through, and what was there before does not count.
set -euo pipefail
check=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/tmp_unchanged.sh
watched=$(mktemp -d)
trap 'rm -rf "$watched"' EXIT
fail=0
expect() { # expect WANT_STATUS WANT_TEXT COMMAND...: the check's exit status and a line of its stderr
    local want=$1 text=$2 status=0 err
    shift 2
    err=$(TMPDIR=$watched "$check" "$@" 2>&1 >/dev/null) || status=$?
    if [ "$status" -ne "$want" ] || { [ -n "$text" ] && ! grep -qF -- "$text" <<<"$err"; }; then
        echo "FAIL \`$*\`: exit $status (want $want), stderr${text:+ (want \"$text\")}: $err"
        fail=1
    else
        echo "ok   \`$*\`: exit $status"
    fi
}
touch "$watched/there-before"
expect 0 "" true
expect 0 "" sh -c 'd=$(mktemp -d) && rm -rf "$d"'
expect 1 "left 2 new entries in $watched:" sh -c 'mkdir "$TMPDIR/tmp.left" && touch "$TMPDIR/finn_build_x"'
expect 0 "" true # the previous command's leftovers were there before this one
rm -rf "${watched:?}"/tmp.left "${watched:?}"/finn_build_x
expect 1 "" false
expect 3 "$watched/late" sh -c 'touch "$TMPDIR/late"; exit 3'
[ -e "$watched/there-before" ] || { echo "FAIL the check removed an entry that was there before"; fail=1; }
exit $fail
