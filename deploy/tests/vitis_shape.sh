#!/usr/bin/env bash
# `-c fpga.toolchain=vitis` gives the deployment graph the same shape as the default `sim`
# (the same targets, as `forge uquery` lists them), and on a machine without AMD's tools it
# stops in analysis, before any action runs, naming the missing tools and the config key.
# Runs from the project root; loading and analysis only, nothing is built.
set -euo pipefail
forge() { FORGE_SKIP_BOOTSTRAP=1 ./forge "$@"; }
fail=0
for dep in mobilenet_2fpga aurora_loopback aurora_pair aurora_ring_48 pipe_2fpga; do
    sim=$(forge uquery "deps(//deploy:$dep)")
    vitis=$(forge uquery -c fpga.toolchain=vitis "deps(//deploy:$dep)")
    if [ "$sim" != "$vitis" ] || [ -z "$sim" ]; then
        echo "FAIL $dep: the target graphs differ between sim and vitis:"
        diff <(echo "$sim") <(echo "$vitis") || true
        fail=1
    else
        echo "ok   $dep: $(echo "$sim" | wc -l) targets under both toolchains"
    fi
done
err=$(mktemp)
trap 'rm -f "$err"' EXIT
if forge audit providers --quiet -c fpga.toolchain=vitis //deploy:aurora_loopback >/dev/null 2>"$err"; then
    echo "FAIL: analysis with fpga.toolchain=vitis succeeded on a machine without AMD's tools"
    fail=1
else
    # shellcheck disable=SC2016 # the backticks are literal: the error message quotes the tools so
    for want in '`v++`' '`vivado`' '`vitis_hls`' '[vitis] root' '[vivado] root'; do
        grep -qF -- "$want" "$err" || { echo "FAIL: the vitis error does not name $want:"; cat "$err"; fail=1; }
    done
    [ $fail -ne 0 ] || echo "ok   vitis without AMD tools stops in analysis: $(grep -o 'fpga.toolchain=vitis needs[^.]*' "$err" | head -1)"
fi
exit $fail
