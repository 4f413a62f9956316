#!/usr/bin/env python3
"""FINN's own stream widths of every layer of an estimates JSON under each folding the
partitioner offers it (PE/SIMD divisors), for the partitioner's width tests.

    stream_widths.py --estimates E.json --out widths.json

Each layer is rebuilt as a standalone node from its exported attributes with PE/SIMD
changed and asked finn-plus 1.6.1's `get_instream_width(0)` / `get_outstream_width(0)`
(custom_op/fpgadataflow/matrixvectoractivation.py, thresholding.py, labelselect.py,
elementwise_binary.py). finn/partitioner/tests/stream_widths.rs compares the
partitioner's widths (src/widths.rs, cost.rs) against this file.
"""

import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "flow"))
import finn_env  # noqa: E402


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def foldings(layer):
    """(PE, SIMD) pairs the partitioner offers (folding.rs: layer_folds)."""
    a = layer["attrs"]
    op = layer["op_type"]
    if op.startswith("MVAU"):
        return [(pe, simd) for pe in divisors(a["MH"]) for simd in divisors(a["MW"])]
    if op.startswith("Thresholding"):
        ch = a["NumChannels"]
    elif op.startswith("LabelSelect"):
        ch = a["Labels"]
    elif op.startswith("ElementwiseAdd"):
        ch = a["out_shape"][-1]
    else:
        return []
    return [(pe, a.get("SIMD")) for pe in divisors(ch)]


def widths(layer, pe, simd):
    from onnx import helper

    from finn.util.basic import getHWCustomOp

    attrs = {k: v for k, v in layer["attrs"].items() if v not in (None, [], "")}
    attrs["PE"] = pe
    if simd is not None:
        attrs["SIMD"] = simd
    backend = "rtl" if layer["op_type"].endswith("_rtl") else "hls"
    node = helper.make_node(
        layer["op_type"], ["in0", "in1"], ["out0"], name=layer["name"],
        domain="finn.custom_op.fpgadataflow." + backend, **attrs,
    )
    op = getHWCustomOp(node)
    return int(op.get_instream_width(0)), int(op.get_outstream_width(0))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--estimates", required=True)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    finn_env.setup()
    cases = []
    for layer in json.load(open(a.estimates))["layers"]:
        for pe, simd in foldings(layer):
            iw, ow = widths(layer, pe, simd)
            cases.append({"layer": layer["name"], "PE": pe, "SIMD": simd,
                          "in_stream_bits": iw, "out_stream_bits": ow})
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump({"finn": "finn-plus 1.6.1", "estimates": os.path.basename(a.estimates),
                   "cases": cases}, f, indent=1)
    os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
