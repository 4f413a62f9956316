#!/usr/bin/env bash
# No source file over 700 lines (docs/architecture.md, "Style"): a file that long holds more
# than one job. Tests, test data and generated files are exempt, and so is a file that says
# why it is whole in a `file-size: <reason>` comment among its first 20 lines. Functions over
# 150 lines are clippy's job (`:style_clippy`, clippy.toml).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

limit=700
over=0
while IFS= read -r -d '' f; do
    case "$f" in
    */tests/* | */test/* | */testdata/* | */fixtures/* | *_test.* | */tests.rs) continue ;;
    esac
    n=$(wc -l <"$f")
    [ "$n" -gt "$limit" ] || continue
    if head -n 20 "$f" | grep -q 'file-size: '; then
        continue
    fi
    echo "error: $f: $n lines (limit $limit): split it by concern, or say why it is one file in a 'file-size: <reason>' comment in its first 20 lines" >&2
    over=$((over + 1))
done < <(find . \( -path ./buck-out -o -path ./target -o -path ./conformance -o -name '.*' -a ! -name . \) -prune \
    -o -type f \( -name '*.rs' -o -name '*.bzl' -o -name BUCK -o -name '*.py' -o -name '*.sh' -o -name '*.cpp' -o -name '*.h' -o -name '*.sv' -o -name '*.svh' -o -name '*.v' \) -print0)
if [ "$over" -gt 0 ]; then
    echo "file_size: $over file(s) over $limit lines" >&2
    exit 1
fi
echo "file_size: every source file within $limit lines"
