#!/usr/bin/env bash
# vitis toolchain: build one AuroraFlow kernel .xo with Vivado.
# Usage: build_xo.sh PYTHON VIVADO PARAMS_JSON OUT_XO OUT_KERNEL_XML
# PYTHON and VIVADO are the commands the toolchain providers name
# (PythonToolchainInfo.interpreter, FpgaToolchainInfo.tools["vivado"]); nothing
# is taken from PATH. Renders the per-instance files, generates
# aurora_64b66b_0, packages the kernel with package_xo. HOME points into the
# scratch directory so Vivado's ~/.Xilinx writes stay out of the real home.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ $# -ne 5 ]; then
  echo "usage: $0 PYTHON VIVADO PARAMS_JSON OUT_XO OUT_KERNEL_XML" >&2
  exit 2
fi
python="$1"; vivado="$2"; params="$3"; xo="$4"; kxml="$5"
[ -x "$vivado" ] || {
  echo "build_xo.sh: $vivado (FpgaToolchainInfo.tools[\"vivado\"]) is not an executable;" \
       "set [vivado] root in .buckconfig.local (or build with -c fpga.toolchain=sim)" >&2
  exit 3
}
# the project root (every action's working directory) before we change into scratch space
root="$(pwd)"
case "$python" in /*) ;; */*) python="$root/$python" ;; esac
work="$(mktemp -d "${TMPDIR:-/tmp}/aurora_flow_xo.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export HOME="$work/home"; mkdir -p "$HOME"
"$python" "$here/render_kernel.py" --absolute "$params" "$work/gen"
( cd "$work" &&
  "$vivado" -mode batch -nojournal -log ip.log -source "$here/create_aurora_ip.tcl" \
    -tclargs "$work/gen/params.tcl" "$work/ip_gen" )
( cd "$work" &&
  "$vivado" -mode batch -nojournal -log pack.log -source "$here/pack_kernel.tcl" \
    -tclargs "$work/gen/params.tcl" "$work/ip_gen" "$work/kernel.xo" "$work/pack" )
mkdir -p "$(dirname "$xo")" "$(dirname "$kxml")"
cp "$work/kernel.xo" "$xo.tmp" && mv "$xo.tmp" "$xo"
cp "$work/gen/kernel.xml" "$kxml.tmp" && mv "$kxml.tmp" "$kxml"
