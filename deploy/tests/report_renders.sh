#!/usr/bin/env bash
# Each deployment's HTML report, opened the way a person opens it: headless Chromium loads
# the page, the DOM it rendered must show one card per device and one cable per link of
# the deployment's topology, and a screenshot is kept in the test's output directory.
#
#   report_renders.sh --deployment NAME TOPOLOGY REPORT JOB RUN BUNDLE [--deployment ...]
# env: TOOL_CHROMIUM (the chromium toolchain's command), TESTKIT_CHECK (tools/testkit/check:
# the topology's counts)
set -euo pipefail
check=$(realpath "${TESTKIT_CHECK:?TESTKIT_CHECK: testkit-check (tools/testkit/check) must be given}")

chromium=${TOOL_CHROMIUM:?TOOL_CHROMIUM: the chromium toolchain must be given}
# outputs kept in TEST_OUTPUT_DIR when given, else in a scratch directory removed on exit
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# what Chromium puts in TMPDIR goes with the scratch directory, also when `timeout` kills it
export TMPDIR=$scratch/tmp
mkdir -p "$TMPDIR"
out=${TEST_OUTPUT_DIR:-$scratch/out}
mkdir -p "$out"
fail=0

while [ $# -gt 0 ]; do
    [ "$1" = --deployment ] || { echo "usage: $0 --deployment NAME TOPOLOGY REPORT JOB RUN BUNDLE ..." >&2; exit 2; }
    name=$2 topology=$3 report=$4
    shift 7
    profile=$scratch/profile-$name
    rm -rf "$profile" && mkdir -p "$profile"
    # Flags: no sandbox as root, nothing that reaches the network (there is none).
    flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
        --disable-background-networking --disable-component-update --disable-sync
        --user-data-dir="$profile")
    dom="$out/$name.dom.html"
    timeout 120 "$chromium" "${flags[@]}" --dump-dom "file://$PWD/$report" >"$dom" 2>"$out/$name.chromium.log" ||
        { echo "FAIL $name: chromium could not load $report (log: $out/$name.chromium.log):"; tail -n 20 "$out/$name.chromium.log"; fail=1; continue; }
    timeout 120 "$chromium" "${flags[@]}" --window-size=1600,1000 --screenshot="$out/$name.png" \
        "file://$PWD/$report" >>"$out/$name.chromium.log" 2>&1 ||
        { echo "FAIL $name: no screenshot"; fail=1; }
    rm -rf "$profile"
    want_cards=$("$check" topology devices "$topology")
    want_cables=$("$check" topology links "$topology")
    got_cards=$(grep -o 'class="card"' "$dom" | wc -l)
    got_cables=$(grep -o 'class="cable"' "$dom" | wc -l)
    if [ "$got_cards" -ne "$want_cards" ] || [ "$got_cables" -ne "$want_cables" ]; then
        echo "FAIL $name: rendered $got_cards cards / $got_cables cables, topology has $want_cards / $want_cables"
        fail=1
    fi
    size=$(stat -c %s "$out/$name.png" 2>/dev/null || echo 0)
    if [ "$size" -lt 10000 ]; then
        echo "FAIL $name: screenshot $out/$name.png is $size bytes"
        fail=1
    else
        echo "ok   $name: $got_cards cards, $got_cables cables rendered; screenshot $out/$name.png"
    fi
done
exit $fail
