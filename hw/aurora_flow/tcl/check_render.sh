#!/usr/bin/env bash
# Check the packaging inputs without Vivado: render every kernel variant with
# `aurora-flow-desc package`
# (port 0/1, streaming/framing, 64/32 B), lint each generated top with
# verilator -Wall against the RTL (Aurora core as a black box), and check that
# kernel.xml's stream widths and the XDC's clock port match the generated top (the
# crossings' constraints: desc/tests/xdc_precedence.rs).
set -euo pipefail
: "${PYTHON:?set by hdl_script_test}" "${VERILATOR:?set by hdl_script_test}"
: "${AURORA_FLOW_DESC:?set by hdl_script_test (tools)}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
# the package first: the modules import it, and the tools read files in order
rtl=("$here/../rtl/af_kernel_pkg.sv")
for f in "$here"/../rtl/*.sv; do [ "$f" -ef "${rtl[0]}" ] || rtl+=("$f"); done
status=0
for cfg in "0 0 64" "1 0 64" "0 1 64" "1 1 32"; do
  # shellcheck disable=SC2086 # split the configuration into its three words
  set -- $cfg
  inst=$1 framing=$2 width=$3
  name="aurora_flow_$inst"
  out="$work/$inst-$framing-$width"
  # every other parameter at kernel.toml's default (derived ones evaluated as the rule does);
  # part and IP version are the rule's attributes, not the kernel's (params.tcl only)
  "$PYTHON" - "$here/../kernel.toml" "$name" "$inst" "$framing" "$width" >"$out.json" <<'PY'
import json, sys, tomllib
toml, name, inst, framing, width = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
desc = tomllib.load(open(toml, "rb"))
out = {"kernel_name": name, "instance": inst, "use_framing": framing, "fifo_width": width,
       "part": "xcu280-fsvh2892-2L-e", "aurora_version": "12.0", "rtl_files": []}
for p in desc["parameter"]:
    if p["attr"] in out or p["attr"].startswith("sim_"):
        continue
    v = p["default"]
    if v == "depth/2" or v == "depth/8":
        v = out["rx_fifo_size"] // width // int(v[-1])
    elif isinstance(v, str) and v.startswith("flow_control."):
        v = desc["flow_control"][v.split(".", 1)[1]]
    elif isinstance(v, str) and v not in p.get("values", {}):
        sys.exit(f"{toml}: parameter {p['attr']}: default {v!r} is not known to check_render.sh")
    out[p["attr"]] = v
json.dump(out, sys.stdout, indent=1, sort_keys=True)
PY
  "$AURORA_FLOW_DESC" package "$here/../kernel.toml" "$out.json" "$out"
  "$VERILATOR" --lint-only -Wall -I"$here/../rtl" -I"$here/../synth" "${rtl[@]}" \
    "$here/../synth/aurora_64b66b_0.sv" "$out/$name.sv" --top-module "$name" ||
    { echo "lint failed: $cfg" >&2; status=1; }
  # the top's ports as the tools see them (the control port's macro expanded)
  "$VERILATOR" -E -P -I"$here/../rtl" "$out/$name.sv" >"$out/$name.expanded.sv"
  "$PYTHON" - "$out" "$name" "$width" "$framing" "$inst" "$here/../rtl" <<'PY' || status=1
import re, sys, xml.etree.ElementTree as ET
out, name, width, framing, inst = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
top = open(f"{out}/{name}.expanded.sv").read()
ports = {m.group(3): (m.group(1), int(m.group(2) or 0) + 1) for m in
         re.finditer(r"\b(input|output)\s+(?:wire|logic)\s+(?:\[(\d+):0\])?\s*(\w+)\s*[,)]", top)}
root = ET.parse(f"{out}/kernel.xml").getroot()
k = root.find("kernel")
errs = []
if k.get("name") != name: errs.append("kernel name")
if k.get("hwControlProtocol") != "ap_ctrl_none": errs.append("control protocol")
for p in k.find("ports"):
    n = p.get("name")
    if p.get("portType") == "stream":
        d, w = ports.get(f"{n}_tdata", (None, 0))
        want_dir = "input" if p.get("mode") == "read_only" else "output"
        if w != int(p.get("dataWidth")) or d != want_dir or w != 8 * width:
            errs.append(f"{n}: kernel.xml {p.get('mode')} {p.get('dataWidth')} vs RTL {d} {w}")
        for s in ("tvalid", "tready"):
            if f"{n}_{s}" not in ports: errs.append(f"{n}_{s} missing")
        has = f"{n}_tlast" in ports and f"{n}_tkeep" in ports
        if has != bool(framing): errs.append(f"{n}: tlast/tkeep present={has}, framing={framing}")
    elif n == "s_axi_control":
        if ports.get("s_axi_control_awaddr", (None, 0))[1] != 12: errs.append("AXI-Lite address width")
if f"gt_refclk_{inst}_p" not in ports: errs.append("refclk port name")
if f"[get_ports gt_refclk_{inst}_p]" not in open(f"{out}/{name}.xdc").read(): errs.append("xdc clock port")
# The clock-domain crossings' constraints are checked with Vivado's precedence rules by
# //hw/aurora_flow:desc_check (desc/src/cdc.rs), on the XDC the rule itself generates.
if errs:
    print(f"{name} framing={framing} width={width}: " + "; ".join(errs)); sys.exit(1)
PY
done
[ $status -eq 0 ] && echo "packaging inputs: ok"
exit $status
