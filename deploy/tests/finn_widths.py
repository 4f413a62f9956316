"""The stream widths a deployment builds against what finn-plus itself inserts there.

    finn_widths.py --model HW.onnx --plan plan.json --folding DIR --sim DEV=fpgaN.sim.json...

The reference is the installed finn-plus (1.6.1) run on the deployment's own HW model with
the plan's folding applied (finn-plus ApplyConfig of the plan's per-device folding configs):

- every cut: the producer's output width (`get_outstream_width`, padded as the stitched IP's
  m_axis), the consumer's input width, and the StreamingDataWidthConverter FINN's
  `InsertDWC` puts between them (none when the widths agree). The cut crosses at the
  producer's width: the plan's cut width, the FINN CUs' ports in both link configurations
  (which the host packs and unpacks its words by: `stream_bits`) and the link
  configuration's width converters in front of and behind the link kernel (v++ joins the
  partition's padded port to the link's stream, as FINN+'s `AddAuroraToLinkConfig` does
  with `sc=<sdp>.m_axis_0:aurora_flow_<n>.tx_axis`) must say so, and the receiving
  partition (its ONNX model with its folding) must start with InsertDWC's converter, as
  finn/flow/input_dwc.py puts it there for the `vitis` build;
- the network's input and output: `InsertIODMA(512)` (the Vitis flow's
  `vitis_iodma_intf_max_width`) gives each DMA an interface width; the deployment's
  `dma_in` / `dma_out` stream must be that wide, fed at FINN's own stream width.

Exit 1 with one line per disagreement.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "finn", "flow"))
import finn_env  # noqa: E402
import input_dwc  # noqa: E402

problems = []


def check(what, ours, finns):
    if ours == finns:
        print(f"ok   {what}: {ours}")
    else:
        problems.append(f"{what}: ours {ours}, finn-plus {finns}")
        print(f"FAIL {what}: ours {ours}, finn-plus {finns}")


def folded_model(model_path, folding_dir):
    from qonnx.core.modelwrapper import ModelWrapper
    from finn.transformation.general import ApplyConfig

    merged = {"Defaults": {}}
    for name in sorted(os.listdir(folding_dir)):
        with open(os.path.join(folding_dir, name)) as f:
            cfg = json.load(f)
        merged.update({k: v for k, v in cfg.items() if k != "Defaults"})
    model = ModelWrapper(model_path)
    return model.transform(ApplyConfig(merged))


def node(model, name):
    found = [n for n in model.graph.node if n.name == name]
    if len(found) != 1:
        raise SystemExit(f"error: the HW model has {len(found)} nodes named {name}")
    return found[0]


def sim_stream(sim, to=None, frm=None):
    for s in sim["streams"]:
        if (to is None or s["to"] == to) and (frm is None or s["from"] == frm):
            return s
    raise SystemExit(f"error: {sim['device']}: no stream {frm} -> {to}")


def port(sim, cu, name):
    k = next(k for k in sim["kernels"] if k["cu"] == cu)
    return next(p for p in k["ports"] if p["name"] == name)


def converter(stream):
    c = stream.get("converter")
    return None if c is None else (c["from_width"], c["to_width"])


def folded_partition(partitions, device, folding):
    from qonnx.core.modelwrapper import ModelWrapper

    from finn.transformation.general import ApplyConfig

    with open(os.path.join(folding, f"{device}.json")) as f:
        cfg = json.load(f)
    cfg.setdefault("Defaults", {})
    return ModelWrapper(os.path.join(partitions, f"{device}.onnx")).transform(ApplyConfig(cfg))


def check_cut(model, cut, sims, partitions, folding):
    from qonnx.custom_op.registry import getCustomOp

    from finn.transformation.fpgadataflow.insert_dwc import InsertDWC

    prod = getCustomOp(node(model, cut["from_layer"]))
    cons = getCustomOp(node(model, cut["to_layer"]))
    out_w, out_wp = prod.get_outstream_width(), prod.get_outstream_width_padded()
    # What InsertDWC puts on that edge of the unpartitioned model.
    dwc_model = model.transform(InsertDWC())
    tensor = node(model, cut["from_layer"]).output[0]
    dwcs = [n for n in dwc_model.graph.node
            if n.op_type.startswith("StreamingDataWidthConverter") and n.input[0] == tensor]
    finn_dwc = None
    if dwcs:
        d = getCustomOp(dwcs[0])
        finn_dwc = (d.get_nodeattr("inWidth"), d.get_nodeattr("outWidth"))
    edge = f"cut {cut['from_layer']} ({cut['from_device']}) -> {cut['to_layer']} ({cut['to_device']})"
    check(f"{edge}: plan stream_bits = producer's output width", cut["stream_bits"], out_w)
    check(f"{edge}: the converter in front of the consumer (input_dwc) = InsertDWC's",
          input_dwc.consumer_widths(cons, cut["stream_bits"]), finn_dwc)
    # The receiving partition as the vitis build makes it: its folding, the converter first.
    part = folded_partition(partitions, cut["to_device"], folding)
    part = input_dwc.insert(part, cut["stream_bits"])
    head = getCustomOp(part.find_consumer(part.graph.input[0].name))
    check(f"{edge}: {cut['to_device']}'s partition takes the cut's width (its s_axis)",
          int(head.get_instream_width()), out_w)
    if finn_dwc is not None:
        check(f"{edge}: {cut['to_device']}'s partition's converter feeds {cut['to_layer']}",
              (head.get_nodeattr("inWidth"), head.get_nodeattr("outWidth"),
               part.find_consumer(head.onnx_node.output[0]).name),
              (finn_dwc[0], finn_dwc[1], cut["to_layer"]))
    import numpy as np

    frame_bits = int(out_w) * int(np.prod(prod.get_folded_output_shape()[:-1]))
    check(f"{edge}: plan bits_per_frame", cut["bits_per_frame"], frame_bits)

    tx, rx = sims[cut["from_device"]], sims[cut["to_device"]]
    send = next(s for s in tx["streams"] if s["from"].startswith(f"finn_{tx['device']}.m_axis")
                and ".tx_axis" in s["to"])
    recv = next(s for s in rx["streams"] if s["to"].startswith(f"finn_{rx['device']}.s_axis")
                and ".rx_axis" in s["from"])
    mp = port(tx, *send["from"].split("."))
    sp = port(rx, *recv["to"].split("."))
    check(f"{edge}: {send['from']} stream_bits (the host's word packing)", mp["stream_bits"], out_w)
    check(f"{edge}: {send['from']} TDATA", mp["width"], out_wp)
    check(f"{edge}: {recv['to']} stream_bits (the host's word unpacking)", sp["stream_bits"], out_w)
    check(f"{edge}: {recv['to']} TDATA", sp["width"], out_wp)
    link_tx = port(tx, *send["to"].split("."))["width"]
    link_rx = port(rx, *recv["from"].split("."))["width"]
    want_tx = None if out_wp == link_tx else (out_wp, link_tx)
    want_rx = None if out_wp == link_rx else (link_rx, out_wp)
    check(f"{edge}: converter {send['from']} -> {send['to']}", converter(send), want_tx)
    check(f"{edge}: converter {recv['from']} -> {recv['to']}", converter(recv), want_rx)


def check_iodma(model, plan, sims):
    from qonnx.custom_op.registry import getCustomOp

    from finn.transformation.fpgadataflow.insert_iodma import InsertIODMA

    with_dma = model.transform(InsertIODMA(max_intfwidth=512))
    dmas = [getCustomOp(n) for n in with_dma.graph.node if n.op_type == "IODMA_hls"]
    by_dir = {d.get_nodeattr("direction"): d for d in dmas}
    first, last = plan["layers"][0], plan["layers"][-1]
    cases = [("in", "dma_in_0", "out", sims[first["device"]]),
             ("out", "dma_out_0", "in", sims[last["device"]])]
    for direction, cu, dma_port, sim in cases:
        d = by_dir[direction]
        ours = port(sim, cu, dma_port)["width"]
        check(f"{sim['device']}: {cu}.{dma_port} width = InsertIODMA intfWidth", ours,
              d.get_nodeattr("intfWidth"))
        endpoint = f"{cu}.{dma_port}"
        s = sim_stream(sim, frm=endpoint) if direction == "in" else sim_stream(sim, to=endpoint)
        finn_end = s["to"] if direction == "in" else s["from"]
        check(f"{sim['device']}: {finn_end} TDATA = InsertIODMA streamWidth",
              port(sim, *finn_end.split("."))["width"], d.get_nodeattr("streamWidth"))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--folding", required=True)
    ap.add_argument("--partitions", required=True, help="the plan's partition models (<device>.onnx)")
    ap.add_argument("--sim", action="append", required=True, metavar="DEV=PATH")
    a = ap.parse_args(argv)
    finn_env.setup()
    with open(a.plan) as f:
        plan = json.load(f)
    sims = {}
    for spec in a.sim:
        dev, path = spec.split("=", 1)
        with open(path) as f:
            sims[dev] = json.load(f)
    model = folded_model(a.model, a.folding)
    if not plan["cuts"]:
        problems.append("the plan has no cut")
    for cut in plan["cuts"]:
        check_cut(model, cut, sims, a.partitions, a.folding)
    check_iodma(model, plan, sims)
    if problems:
        print(f"{len(problems)} width(s) differ from finn-plus's")
        return 1
    print(f"all widths agree with finn-plus ({len(plan['cuts'])} cut(s), 2 DMAs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
