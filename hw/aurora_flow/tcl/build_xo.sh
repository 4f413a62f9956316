#!/usr/bin/env bash
# vitis toolchain: build one AuroraFlow kernel .xo with Vivado.
# Usage: build_xo.sh DESC_TOOL KERNEL_TOML PLATFORM_TOML VIVADO PARAMS_JSON OUT_XO OUT_KERNEL_XML
# DESC_TOOL is aurora-flow-desc (built by the graph), VIVADO the command
# FpgaToolchainInfo.tools["vivado"] names, PLATFORM_TOML the board's file (the packager checks
# the instance against its QSFP ports); nothing is taken from PATH. Renders the per-instance files, generates
# aurora_64b66b_0, packages the kernel with package_xo. HOME points into the
# scratch directory so Vivado's ~/.Xilinx writes stay out of the real home.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
if [ $# -ne 7 ]; then
  echo "usage: $0 DESC_TOOL KERNEL_TOML PLATFORM_TOML VIVADO PARAMS_JSON OUT_XO OUT_KERNEL_XML" >&2
  exit 2
fi
desc="$1"; kernel_toml="$2"; platform="$3"; vivado="$4"; params="$5"; xo="$6"; kxml="$7"
[ -x "$vivado" ] || {
  echo "build_xo.sh: $vivado (FpgaToolchainInfo.tools[\"vivado\"]) is not an executable;" \
       "set [vivado] root in .buckconfig.local (or build with -c fpga.toolchain=sim)" >&2
  exit 3
}
# the project root (every action's working directory) before we change into scratch space
root="$(pwd)"
case "$desc" in /*) ;; */*) desc="$root/$desc" ;; esac
case "$kernel_toml" in /*) ;; *) kernel_toml="$root/$kernel_toml" ;; esac
case "$params" in /*) ;; *) params="$root/$params" ;; esac
case "$platform" in /*) ;; *) platform="$root/$platform" ;; esac
work="$(mktemp -d "${TMPDIR:-/tmp}/aurora_flow_xo.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export HOME="$work/home"; mkdir -p "$HOME"
"$desc" package --absolute --platform "$platform" "$kernel_toml" "$params" "$work/gen"
( cd "$work" &&
  "$vivado" -mode batch -nojournal -log ip.log -source "$here/create_aurora_ip.tcl" \
    -tclargs "$work/gen/params.tcl" "$work/ip_gen" )
( cd "$work" &&
  "$vivado" -mode batch -nojournal -log pack.log -source "$here/pack_kernel.tcl" \
    -tclargs "$work/gen/params.tcl" "$work/ip_gen" "$work/kernel.xo" "$work/pack" )
mkdir -p "$(dirname "$xo")" "$(dirname "$kxml")"
cp "$work/kernel.xo" "$xo.tmp" && mv "$xo.tmp" "$xo"
cp "$work/gen/kernel.xml" "$kxml.tmp" && mv "$kxml.tmp" "$kxml"
