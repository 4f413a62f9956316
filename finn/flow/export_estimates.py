#!/usr/bin/env python3
"""Export a FINN HW dataflow graph with per-layer estimates as one JSON file.

    export_estimates.py --in model.onnx --out estimates.json --fpga-part P [--clk-ns 4.0]

For every HW layer: its op type, its predecessors in the dataflow graph, every node
attribute (the partitioner re-evaluates FINN's estimate formulas from them for
other foldings), stream widths, output bits per frame, and FINN's own cycle and
resource estimates for the current folding. The "network" entry repeats FINN's
network-level figures (max cycles, FPS at the clock, latency). The part is the board's, the
`part` of its toolchains/fpga_platforms file (the finn_estimates rule passes it).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import finn_env  # noqa: E402

def export(model_path, clk_ns, fpga_part):
    import numpy as np
    from qonnx.core.modelwrapper import ModelWrapper

    from finn.analysis.fpgadataflow.dataflow_performance import dataflow_performance
    from finn.transformation.fpgadataflow.annotate_cycles import AnnotateCycles
    from finn.util.basic import getHWCustomOp
    from finn.util.fpgadataflow import is_hls_node, is_rtl_node

    model = ModelWrapper(model_path)
    model = model.transform(AnnotateCycles())
    producers = {o: n.name for n in model.graph.node for o in n.output}
    layers = []
    for node in model.graph.node:
        if not (is_hls_node(node) or is_rtl_node(node)):
            raise SystemExit(
                f"error: {model_path}: node {node.name} ({node.op_type}) is not a specialised "
                "HW layer; export estimates after step specialize_layers"
            )
        inst = getHWCustomOp(node)
        attrs = {}
        for name in inst.get_nodeattr_types():
            try:
                val = inst.get_nodeattr(name)
            except Exception:  # attributes without defaults that this node lacks
                continue
            if isinstance(val, (int, float, str, bytes, list, tuple)):
                attrs[name] = finn_env.plain(val)
        res = inst.node_res_estimation(fpga_part)
        out_dt = inst.get_output_datatype()
        out_values = int(np.prod(inst.get_normal_output_shape()))
        in_values = int(np.prod(inst.get_normal_input_shape()))
        layers.append({
            "name": node.name,
            "op_type": node.op_type,
            "preds": [producers[i] for i in node.input if i in producers],
            "attrs": attrs,
            "in_stream_bits": int(inst.get_instream_width()),
            "out_stream_bits": int(inst.get_outstream_width()),
            "in_bits_per_frame": in_values * int(inst.get_input_datatype().bitwidth()),
            "out_bits_per_frame": out_values * int(out_dt.bitwidth()),
            "cycles": int(inst.get_exp_cycles()),
            "res": {
                "LUT": float(res["LUT"]), "FF": 0.0, "BRAM_18K": float(res["BRAM_18K"]),
                "URAM": float(res["URAM"]), "DSP": float(res["DSP"]),
            },
        })
    perf = model.analysis(dataflow_performance)
    max_cycles = int(perf["max_cycles"])
    return {
        "model": os.path.basename(model_path),
        "clk_ns": clk_ns,
        "fpga_part": fpga_part,
        "layers": layers,
        "network": {
            "max_cycles": max_cycles,
            "max_cycles_node_name": perf["max_cycles_node_name"],
            "critical_path_cycles": int(perf["critical_path_cycles"]),
            "estimated_throughput_fps": 1e9 / clk_ns / max_cycles,
            "estimated_latency_ns": int(perf["critical_path_cycles"]) * clk_ns,
        },
    }


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--in", dest="inp", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--clk-ns", type=float, default=4.0)
    ap.add_argument("--fpga-part", required=True,
                    help="the board's part: `part` of its toolchains/fpga_platforms file")
    a = ap.parse_args(argv)
    finn_env.setup()
    data = export(a.inp, a.clk_ns, a.fpga_part)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1)
    os.replace(tmp, a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
