#!/usr/bin/env bash
# The run report opened the way a person opens it: headless Chromium loads the page; the DOM
# it rendered must show one utilisation panel per device and one chart per link of the run
# record, one latency histogram holding every image, and the paper's four measured figures
# labelled paper-measured; a screenshot is kept in the test's output directory.
#
#   report_renders.sh REPORT_HTML RUN_JSON
# env: TOOL_CHROMIUM (the chromium toolchain's command)
set -euo pipefail

chromium=${TOOL_CHROMIUM:?TOOL_CHROMIUM: the chromium toolchain must be given}
report=${1:?usage: report_renders.sh REPORT_HTML RUN_JSON}
run=${2:?usage: report_renders.sh REPORT_HTML RUN_JSON}
case $report in /*) url=file://$report ;; *) url=file://$PWD/$report ;; esac
# outputs kept in TEST_OUTPUT_DIR when given, else in a scratch directory removed on exit
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
# what Chromium puts in TMPDIR goes with the scratch directory, also when `timeout` kills it
export TMPDIR=$scratch/tmp
mkdir -p "$TMPDIR"
out=${TEST_OUTPUT_DIR:-$scratch/out}
mkdir -p "$out"
profile=$scratch/profile
mkdir -p "$profile"
# Flags: no sandbox as root, nothing that reaches the network (there is none).
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
    --disable-background-networking --disable-component-update --disable-sync
    --user-data-dir="$profile")
dom="$out/run_report.dom.html"
timeout 120 "$chromium" "${flags[@]}" --dump-dom "$url" >"$dom" 2>"$out/chromium.log" ||
    { echo "FAIL: chromium could not load $report (log: $out/chromium.log):"; tail -n 20 "$out/chromium.log"; exit 1; }
timeout 120 "$chromium" "${flags[@]}" --window-size=1200,2400 --screenshot="$out/run_report.png" \
    "$url" >>"$out/chromium.log" 2>&1 || { echo "FAIL: no screenshot"; exit 1; }

fail=0
expect() { # what got want
    if [ "$2" -ne "$3" ]; then
        echo "FAIL: $1: rendered $2, the run record has $3"
        fail=1
    else
        echo "ok   $1: $2"
    fi
}
# the run record's own counts (each device has a clock, each link its samples)
want_devices=$(grep -o '"clock_mhz"' "$run" | wc -l)
want_links=$(grep -o '"samples"' "$run" | wc -l)
want_images=$(grep -o '"images": *[0-9]*' "$run" | grep -o '[0-9]*$')
expect "utilisation panels" "$(grep -o 'class="device-util"' "$dom" | wc -l)" "$want_devices"
expect "link charts" "$(grep -o 'class="link-chart"' "$dom" | wc -l)" "$want_links"
expect "latency histograms" "$(grep -o 'class="latency-histogram"' "$dom" | wc -l)" 1
bins=0
for c in $(grep -o 'class="bin" data-count="[0-9]*"' "$dom" | grep -o '[0-9]*"$' | tr -d '"'); do
    bins=$((bins + c))
done
expect "frames in the histogram" "$bins" "$want_images"
for figure in "link-latency|0.51 µs" "link-throughput|95.03 Gbit/s" "fps|4,460.92 FPS" "latency|0.89 ms"; do
    q=${figure%%|*} v=${figure#*|}
    if grep -F "data-quantity=\"$q\" data-source=\"paper-measured\"" "$dom" | grep -F "<td class=\"v\">$v</td>" |
        grep -qF '<td class="source">paper-measured</td>'; then
        echo "ok   paper figure $v labelled paper-measured"
    else
        echo "FAIL: no row with the paper's $v labelled paper-measured"
        fail=1
    fi
done
size=$(stat -c %s "$out/run_report.png" 2>/dev/null || echo 0)
if [ "$size" -lt 10000 ]; then
    echo "FAIL: screenshot $out/run_report.png is $size bytes"
    fail=1
else
    echo "ok   screenshot $out/run_report.png ($size bytes)"
fi
exit $fail
