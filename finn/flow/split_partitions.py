#!/usr/bin/env python3
"""Split a FINN dataflow model into one model per device, following a partition plan.

    split_partitions.py --in model.onnx --plan plan.json --out-dir DIR

Writes DIR/<device>.onnx for every device that holds layers, and DIR/partitions.json
listing them in pipeline order with the tensors that cross each cut. Layers are
matched by name; the plan must name every node of the model. Each cut must carry one
stream from the device before it (a cable carries one): a network with branches is cut
only where its branches have joined again.

A replica plan (`replicas`, finn/README.md "Replicas") also gets DIR/segments/<first>__<last>.onnx
for every distinct segment of a copy cut across cards (the layers from <first> to <last>, split
the same way), listed under `segments` in partitions.json; whole copies need none (the
unpartitioned model is one).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import finn_env  # noqa: E402


class UserError(Exception):
    pass


def _value_info(model, name):
    from onnx import TensorProto, helper

    shape = model.get_tensor_shape(name)
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)


def split(model, device_of):
    """Return [(device, ModelWrapper)] in pipeline order."""
    from onnx import helper
    from qonnx.core.modelwrapper import ModelWrapper

    missing = [n.name for n in model.graph.node if n.name not in device_of]
    if missing:
        raise UserError(f"the plan does not place node(s): {', '.join(missing)}")
    order = []
    for n in model.graph.node:
        d = device_of[n.name]
        if d not in order:
            order.append(d)
        elif order[-1] != d:
            raise UserError(f"device {d} holds non-contiguous layers (again at {n.name})")
    inits = {i.name for i in model.graph.initializer}
    graph_out = {o.name for o in model.graph.output}
    parts = []
    for d in order:
        nodes = [n for n in model.graph.node if device_of[n.name] == d]
        produced = {o for n in nodes for o in n.output}
        consumed_here = [i for n in nodes for i in n.input if i]
        ins = []
        for t in consumed_here:
            if t not in produced and t not in inits and t not in ins:
                ins.append(t)
        outs = []
        for n in nodes:
            for o in n.output:
                used_outside = any(
                    o in m.input for m in model.graph.node if device_of[m.name] != d
                )
                if (used_outside or o in graph_out) and o not in outs:
                    outs.append(o)
        used_inits = [i for i in model.graph.initializer if i.name in consumed_here]
        g = helper.make_graph(
            nodes, f"{model.graph.name}_{d}",
            [_value_info(model, t) for t in ins], [_value_info(model, t) for t in outs],
            initializer=used_inits,
        )
        m = helper.make_model(g, opset_imports=list(model.model.opset_import))
        m.ir_version = model.model.ir_version
        part = ModelWrapper(m)
        names = set(ins) | set(outs) | produced | {i.name for i in used_inits}
        # Sorted: a set of strings iterates in an order that changes with every Python
        # process (hash randomisation), and each annotation is appended in this order, so
        # the saved model's bytes would differ between two runs on the same inputs.
        for t in sorted(names):
            dt = model.get_tensor_datatype(t)
            if dt is not None:
                part.set_tensor_datatype(t, dt)
            layout = model.get_tensor_layout(t)
            if layout is not None:
                part.set_tensor_layout(t, layout)
        for vi in model.graph.value_info:
            if vi.name in produced and vi.name not in outs:
                part.graph.value_info.append(vi)
        parts.append((d, part, ins, outs))
    _check_one_stream_per_cut(model, parts)
    return parts


def _check_one_stream_per_cut(model, parts):
    """Every device after the first reads exactly one stream, and from the device before it."""
    graph_in = {i.name for i in model.graph.input}
    for k, (d, _, ins, _) in enumerate(parts):
        if k == 0:
            continue
        prev, prev_outs = parts[k - 1][0], parts[k - 1][3]
        if len(ins) != 1 or ins[0] not in prev_outs or ins[0] in graph_in:
            raise UserError(
                f"device {d} reads {len(ins)} stream(s) ({', '.join(ins)}) where a cut carries "
                f"one from {prev} (which writes {', '.join(prev_outs)}); a cut inside a "
                "residual block splits its branches: place the whole block on one device")


def replica_segments(plan):
    """The distinct segments of the plan's cut copies: [(key, first, last, layers)]; copies
    share one folding, so two copies cut at the same layers share a segment model."""
    out = {}
    for r in plan.get("replicas", []):
        if len(r["segments"]) < 2:
            continue
        for s in r["segments"]:
            key = f"{s['first_layer']}__{s['last_layer']}"
            out.setdefault(key, (key, s["first_layer"], s["last_layer"], list(s["layers"])))
    return [out[k] for k in sorted(out)]


def split_segment(model, layers):
    """One segment of a cut copy as its own model: the graph split as a plan would place the
    layers before it, the segment and the layers after it on three devices."""
    inside = set(layers)
    seen = False
    device_of = {}
    for n in model.graph.node:
        if n.name in inside:
            device_of[n.name], seen = "segment", True
        else:
            device_of[n.name] = "after" if seen else "before"
    return next(p for p in split(model, device_of) if p[0] == "segment")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--in", dest="inp", required=True)
    ap.add_argument("--plan", required=True)
    ap.add_argument("--out-dir", required=True)
    a = ap.parse_args(argv)
    finn_env.setup()
    from qonnx.core.modelwrapper import ModelWrapper

    try:
        try:
            with open(a.plan) as f:
                plan = json.load(f)
            device_of = {layer["name"]: layer["device"] for layer in plan["layers"]}
            wanted = replica_segments(plan)
        except (OSError, ValueError, KeyError, TypeError) as e:
            raise UserError(f"{a.plan}: not a partition plan ({e})") from None
        try:
            model = ModelWrapper(a.inp)
        except Exception as e:  # protobuf/onnx decode errors
            raise UserError(f"{a.inp}: not a valid ONNX model ({e})") from None
        parts = split(model, device_of)
        segments = [(key, first, last, split_segment(model, layers))
                    for key, first, last, layers in wanted]
    except UserError as e:
        print(f"error: split_partitions: {e}", file=sys.stderr)
        return 3
    with finn_env.StagedDir(a.out_dir, ".split_") as tmp:
        manifest = []
        for d, part, ins, outs in parts:
            part.save(os.path.join(tmp, f"{d}.onnx"))
            manifest.append({"device": d, "model": f"{d}.onnx", "inputs": ins, "outputs": outs,
                             "layers": [n.name for n in part.graph.node]})
        listed = {"partitions": manifest}
        if segments:
            os.makedirs(os.path.join(tmp, "segments"))
            listed["segments"] = []
            for key, first, last, (_, part, ins, outs) in segments:
                part.save(os.path.join(tmp, "segments", f"{key}.onnx"))
                listed["segments"].append({"key": key, "first_layer": first, "last_layer": last,
                                           "model": f"segments/{key}.onnx", "inputs": ins,
                                           "outputs": outs})
        with open(os.path.join(tmp, "partitions.json"), "w") as f:
            json.dump(listed, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
