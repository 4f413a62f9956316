#!/usr/bin/env bash
# A guide's code blocks are the repository's files: every fenced block titled with a path
# (```cpp title="apps/pipe/producer.cpp") must be byte-identical to that file, a block
# titled `title="PATH (excerpt)"` must appear in PATH as whole lines, and every file under
# the example's paths must be shown whole by some block (a folder's README.md aside: it
# describes the example and points at the guide), so a reader who types the guide's blocks
# gets exactly the example the tests build and run. Run from anywhere; paths are
# relative to the checkout holding this script (the `//:guide_kernels_check` test).
#
#   tools/docs/guide_blocks.sh GUIDE.md [EXAMPLE_PATH ...]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
guide=${1:?usage: tools/docs/guide_blocks.sh GUIDE.md [EXAMPLE_PATH ...]}
shift
[ -f "$guide" ] || { echo "$guide: no such file" >&2; exit 2; }

blocks=$(mktemp -d)
trap 'rm -rf "$blocks"' EXIT
# One file per titled block (its lines, each ending in a newline) and an index line
# "N<TAB>PATH<TAB>whole|excerpt<TAB>LINE"; a fence that names a title badly is an error.
awk -v dir="$blocks" -v guide="$guide" '
    function fail(msg) { printf "%s:%d: %s\n", guide, NR, msg > "/dev/stderr"; bad = 1 }
    state == "titled" && /^```$/ { state = ""; close(file); next }
    state == "titled" { print > file; next }
    state == "plain" && /^```/ { state = ""; next }
    state == "plain" { next }
    /^```/ && /title=/ {
        if ($0 !~ /^```[A-Za-z0-9_+-]* title="[^" ]+( \(excerpt\))?"$/) {
            fail("a titled block opens as ```LANG title=\"PATH\" or title=\"PATH (excerpt)\"")
            state = "plain"; next
        }
        match($0, /title="[^"]*"/)
        title = substr($0, RSTART + 7, RLENGTH - 8)
        mode = "whole"
        if (title ~ / \(excerpt\)$/) { mode = "excerpt"; sub(/ \(excerpt\)$/, "", title) }
        n++; file = dir "/" n; printf "" > file
        printf "%d\t%s\t%s\t%d\n", n, title, mode, NR > (dir "/index")
        state = "titled"; opened = NR; next
    }
    /^```/ { state = "plain"; opened = NR }
    END {
        if (state != "") { NR = opened; fail("this block is never closed (a line ``` alone)") }
        exit bad
    }
' "$guide"
[ -f "$blocks/index" ] || { echo "$guide: no titled code blocks" >&2; exit 1; }

fail=0
whole=0
excerpts=0
shown=$blocks/shown
: >"$shown"
while IFS=$'\t' read -r n path mode line; do
    where="$guide:$line: block titled $path"
    if [ ! -f "$path" ]; then
        echo "$where: no such file in the repository (fix the title or add the file)" >&2
        fail=1
    elif [ "$mode" = whole ]; then
        whole=$((whole + 1))
        echo "$path" >>"$shown"
        if ! cmp -s "$path" "$blocks/$n"; then
            echo "$where: differs from the file (- file, + guide); make them the same:" >&2
            diff -u "$path" "$blocks/$n" | tail -n +3 | head -n 40 >&2 || true
            fail=1
        fi
    else
        excerpts=$((excerpts + 1))
        # the block's lines, in order and whole, somewhere in the file
        if ! awk 'FNR == NR { f = f "\n" $0; next } { b = b "\n" $0 }
                END { exit !(index(f "\n", b "\n") > 0) }' "$path" "$blocks/$n"; then
            echo "$where: this excerpt is not in the file as whole lines; copy it from $path again:" >&2
            sed 's/^/    /' "$blocks/$n" >&2
            fail=1
        fi
    fi
done <"$blocks/index"

files=0
for p in "$@"; do
    [ -e "$p" ] || { echo "$p: the example path does not exist" >&2; fail=1; continue; }
    while IFS= read -r f; do
        files=$((files + 1))
        grep -qxF "$f" "$shown" ||
            { echo "$f: part of the example but $guide shows it nowhere whole (add a block titled \"$f\")" >&2; fail=1; }
    done < <(find "$p" -type f ! -name README.md | LC_ALL=C sort)
done

if [ $fail -ne 0 ]; then
    echo "$guide and the repository differ (above)" >&2
    exit 1
fi
echo "$guide: $whole whole files and $excerpts excerpts equal the repository; the example's $files files are all shown"
