#!/usr/bin/env bash
# Every .xo a `vitis` link takes is built for the link's board. Analysis only (as
# vitis_shape.sh): with the FPGA toolchain's roots set to a directory that need not exist, no
# action runs. (1) An HLS kernel has one .xo per platform file, `<board_id>/<name>.xo`, keyed
# by the file's `name` (the board ids read here from the files themselves); (2) a link on
# the U55C given a kernel built for the U280 only is refused, naming both boards (under sim
# too: the kernel's `platforms` hold for both toolchains).
# Runs from the project root.
set -euo pipefail
forge() { FORGE_SKIP_BOOTSTRAP=1 ./forge "$@"; }
vitis=(-c fpga.toolchain=vitis -c vitis.root=/nonexistent/vitis -c vivado.root=/nonexistent/vivado)
fail=0
out=$(forge audit providers "${vitis[@]}" //hw/hls:dma_in)
n=0
for file in toolchains/fpga_platforms/*.toml; do
    name=$(sed -n 's/^name = "\(.*\)"$/\1/p' "$file")
    id=$(sed -n 's/^board_id = "\(.*\)"$/\1/p' "$file")
    want="\"$name\": <build artifact $id/dma_in.xo"
    if grep -qF -- "$want" <<<"$out" && grep -qF -- "\"xo_$id\"" <<<"$out"; then
        echo "ok   dma_in has its $id .xo ($name) and sub-target [xo_$id]"
    else
        echo "FAIL: no \`$want\` or [xo_$id] in:"; echo "$out"; fail=1
    fi
    n=$((n + 1))
done
[ "$n" -ge 2 ] || { echo "FAIL: $n platform files, want at least the U280 and the U55C"; fail=1; }

err=$(mktemp)
trap 'rm -f "$err"' EXIT
# shellcheck disable=SC2016 # the backticks are literal: the error message quotes the kernel
want='kernel `tie_off_source_u280_only` is built for xilinx_u280_gen3x16_xdma_1_202211_1 only, not for this link'"'"'s board xilinx_u55c_gen3x16_xdma_3_202210_1'
for tc in vitis sim; do
    flags=(-c fpga.toolchain=sim)
    [ "$tc" = sim ] || flags=("${vitis[@]}")
    if forge audit providers "${flags[@]}" -c deploy_test.board_refusal=true //deploy:board_refusal >/dev/null 2>"$err"; then
        echo "FAIL $tc: a U280-only kernel in a U55C link passed analysis"; fail=1
    elif grep -qF -- "$want" "$err"; then
        echo "ok   $tc: a U280-only kernel in a U55C link is refused: $want"
    else
        echo "FAIL $tc: the refusal does not say \`$want\`:"; cat "$err"; fail=1
    fi
done
exit $fail
