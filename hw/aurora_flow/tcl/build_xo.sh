#!/usr/bin/env bash
# vitis toolchain: build one AuroraFlow kernel .xo with Vivado.
# Usage: build_xo.sh PARAMS_JSON OUT_XO OUT_KERNEL_XML
# Renders the per-instance files, generates aurora_64b66b_0, packages the
# kernel with package_xo. Vivado must be on PATH; HOME points into the
# scratch directory so Vivado's ~/.Xilinx writes stay out of the real home.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ $# -ne 3 ]; then echo "usage: $0 PARAMS_JSON OUT_XO OUT_KERNEL_XML" >&2; exit 2; fi
params="$1"; xo="$2"; kxml="$3"
command -v vivado >/dev/null 2>&1 || {
  echo "build_xo.sh: vivado is not on PATH; the vitis toolchain needs a Vivado install" \
       "(or build with -c fpga.toolchain=sim)" >&2
  exit 3
}
work="$(mktemp -d "${TMPDIR:-/tmp}/aurora_flow_xo.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export HOME="$work/home"; mkdir -p "$HOME"
python3 "$here/render_kernel.py" --absolute "$params" "$work/gen"
( cd "$work" &&
  vivado -mode batch -nojournal -log ip.log -source "$here/create_aurora_ip.tcl" \
    -tclargs "$work/gen/params.tcl" "$work/ip_gen" )
( cd "$work" &&
  vivado -mode batch -nojournal -log pack.log -source "$here/pack_kernel.tcl" \
    -tclargs "$work/gen/params.tcl" "$work/ip_gen" "$work/kernel.xo" "$work/pack" )
mkdir -p "$(dirname "$xo")" "$(dirname "$kxml")"
cp "$work/kernel.xo" "$xo.tmp" && mv "$xo.tmp" "$xo"
cp "$work/gen/kernel.xml" "$kxml.tmp" && mv "$kxml.tmp" "$kxml"
