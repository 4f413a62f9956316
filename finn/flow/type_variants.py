#!/usr/bin/env python3
"""FINN's own resource estimates of every MVAU/VVAU of an estimates JSON with each
weight memory (`ram_style`) and multiplier resource (`resType`) the partitioner may choose.

    type_variants.py --estimates E.json [--estimates E2.json ...] --fpga-part P --out variants.json

Each layer is rebuilt as a standalone node from its exported attributes with one attribute
changed, and priced by finn-plus 1.6.1's `node_res_estimation` (the methods
`bram_estimation`, `uram_estimation`, `lut_estimation`, `dsp_estimation` of
custom_op/fpgadataflow/matrixvectoractivation.py, vectorvectoractivation.py and their
hls/rtl subclasses). The partitioner's tests (finn/partitioner/tests/formulas.rs) compare
its Rust formulas against this file.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import finn_env  # noqa: E402

def variants(layer):
    """(ram_style, resType) pairs the partitioner offers for this layer (folding.rs)."""
    rtl = layer["op_type"].endswith("_rtl")
    mems = [None]
    if layer["attrs"].get("mem_mode") == "internal_decoupled":
        mems += ["block", "ultra"] + ([] if rtl else ["distributed"])
    computes = [None] + ([] if rtl else ["dsp", "lut"])
    return [(m, c) for m in mems for c in computes if (m, c) != (None, None)]


def price(layer, ram_style, res_type, fpga_part):
    from onnx import helper

    from finn.util.basic import getHWCustomOp

    attrs = {k: v for k, v in layer["attrs"].items() if v not in (None, [], "")}
    if ram_style:
        attrs["ram_style"] = ram_style
    if res_type:
        attrs["resType"] = res_type
    backend = "rtl" if layer["op_type"].endswith("_rtl") else "hls"
    node = helper.make_node(
        layer["op_type"], ["in0", "weights"], ["out0"], name=layer["name"],
        domain="finn.custom_op.fpgadataflow." + backend, **attrs,
    )
    res = getHWCustomOp(node).node_res_estimation(fpga_part)
    return {k: float(res[k]) for k in ("LUT", "BRAM_18K", "URAM", "DSP")}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--estimates", action="append", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--fpga-part", required=True,
                    help="the board's part: `part` of its toolchains/fpga_platforms file")
    a = ap.parse_args(argv)
    finn_env.setup()
    cases = []
    for path in a.estimates:
        est = json.load(open(path))
        for layer in est["layers"]:
            if not layer["op_type"].startswith(("MVAU", "VVAU")):
                continue
            for ram_style, res_type in variants(layer):
                cases.append({
                    "estimates": os.path.basename(path),
                    "layer": layer["name"],
                    "ram_style": ram_style,
                    "resType": res_type,
                    "res": price(layer, ram_style, res_type, a.fpga_part),
                })
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"fpga_part": a.fpga_part, "finn": "finn-plus 1.6.1", "cases": cases}, f, indent=1)
    os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
