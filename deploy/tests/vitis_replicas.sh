#!/usr/bin/env bash
# A replica deployment builds under `-c fpga.toolchain=vitis`: with AMD's tools stood in
# (an install root whose bin/ holds scripts named v++, vivado, vitis_hls and xclbinutil),
# the analysis of //deploy:mobilenet_2fpga_replicas succeeds, each card's link has the
# `finn_replica_xo` directory of its FINN kernels (`[finn_xo]`), and every command its
# actions run comes from a toolchain (`forge audit tools`). Without the stand-in roots the
# analysis still stops naming the missing tools. Loading and analysis only, nothing is built.
set -euo pipefail
forge() { FORGE_SKIP_BOOTSTRAP=1 ./forge "$@"; }
fail=0
root=$(mktemp -d)
out=$(mktemp)
trap 'rm -rf "$root" "$out"' EXIT
mkdir "$root/bin"
for tool in v++ vivado vitis_hls xclbinutil; do
    printf '#!/bin/sh\necho "%s stand-in"\n' "$tool" >"$root/bin/$tool"
    chmod +x "$root/bin/$tool"
done
vitis=(-c fpga.toolchain=vitis -c "vitis.root=$root" -c "vivado.root=$root")
links=(//deploy:mobilenet_2fpga_replicas__fpga0 //deploy:mobilenet_2fpga_replicas__fpga1)
if ! forge audit providers "${vitis[@]}" //deploy:mobilenet_2fpga_replicas "${links[@]}" >"$out" 2>&1; then
    echo "FAIL: analysis of the replica deployment under vitis:"
    cat "$out"
    fail=1
else
    for link in "${links[@]}"; do
        block=$(awk -v t="root$link (" 'index($0, t) == 1 {on = 1; next} /^root\/\// {on = 0} on' "$out")
        if grep -q '"finn_xo"' <<<"$block" && grep -q 'toolchain="vitis"' <<<"$block"; then
            echo "ok   $link: a vitis bitstream with its FINN kernels' .xo directory [finn_xo]"
        else
            echo "FAIL $link: no [finn_xo] sub-target or not a vitis bitstream:"
            echo "$block"
            fail=1
        fi
    done
fi
if forge audit tools "${vitis[@]}" //deploy:mobilenet_2fpga_replicas "${links[@]}" >"$out" 2>&1; then
    echo "ok   $(grep -o '[0-9]* commands checked' "$out") under vitis"
else
    echo "FAIL: forge audit tools under vitis:"
    cat "$out"
    fail=1
fi
if forge audit providers -c fpga.toolchain=vitis "${links[0]}" >"$out" 2>&1; then
    echo "FAIL: analysis under vitis without AMD's tools succeeded"
    fail=1
else
    grep -q 'fpga.toolchain=vitis needs' "$out" || { echo "FAIL: no missing-tools error:"; cat "$out"; fail=1; }
fi
exit $fail
