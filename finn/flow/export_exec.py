#!/usr/bin/env python3
"""Export FINN HW models in the executor format that host/finn_exec reads.

    export_exec.py --model whole.onnx --partitions DIR --out-dir EXEC

DIR is the output of split_partitions.py (partitions.json + <device>.onnx). EXEC gets
one directory per device and `whole/` for the unpartitioned model, each holding
`graph.json` (nodes with every FINN node attribute, tensor shapes and FINN datatypes)
and `tensors/<n>.f32` (each initializer as little-endian float32, FINN's own container
type), plus `exec.json` listing the devices in pipeline order with their cut tensors.
The format is documented in the README ("FINN executor"). A replica plan's cut copies add
`segments/<first>__<last>/` per distinct segment (split_partitions.py's `segments`), listed
in exec.json's `segments` with the layers they span.

Nodes are exported as the generic HW op (MVAU, not MVAU_hls): the specialised op
carries the same attributes and FINN executes the generic op in Python
(finn/flow/functional.py), which is the reference the executor is tested against.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import finn_env  # noqa: E402

FORMAT = "auroraforge-finn-exec/1"


class UserError(Exception):
    pass


def _node_attrs(node):
    """Every attribute FINN's op class knows, defaults included (the executor must not
    guess a default differently from FINN)."""
    from qonnx.custom_op.registry import getCustomOp

    inst = getCustomOp(node)
    attrs = {}
    for name in inst.get_nodeattr_types():
        try:
            val = inst.get_nodeattr(name)
        except Exception:  # attributes without a default that this node lacks
            continue
        if isinstance(val, (int, float, str, bytes, list, tuple)):
            attrs[name] = finn_env.plain(val)
    return attrs


def _tensor_info(model, name):
    dt = model.get_tensor_datatype(name)
    return {"shape": [int(d) for d in model.get_tensor_shape(name)],
            "dtype": dt.name if dt is not None else "FLOAT32"}


def export_model(model, out_dir):
    """Write graph.json + tensors/ for one (despecialised) ModelWrapper."""
    import numpy as np

    os.makedirs(os.path.join(out_dir, "tensors"))
    inits = {}
    for i, init in enumerate(model.graph.initializer):
        arr = np.asarray(model.get_initializer(init.name), dtype="<f4")
        rel = f"tensors/{i}.f32"
        arr.tofile(os.path.join(out_dir, rel))
        dt = model.get_tensor_datatype(init.name)
        inits[init.name] = {"shape": [int(d) for d in arr.shape], "file": rel,
                            "dtype": dt.name if dt is not None else "FLOAT32"}
    names = []
    for n in model.graph.node:
        for t in list(n.input) + list(n.output):
            if t and t not in inits and t not in names:
                names.append(t)
    nodes = []
    for n in model.graph.node:
        if n.domain != "finn.custom_op.fpgadataflow":
            raise UserError(f"node {n.name} ({n.domain}.{n.op_type}) is not a FINN HW layer")
        nodes.append({"name": n.name, "op_type": n.op_type, "inputs": list(n.input),
                      "outputs": list(n.output), "attrs": _node_attrs(n)})
    graph = {
        "format": FORMAT,
        "name": model.graph.name,
        "inputs": [i.name for i in model.graph.input],
        "outputs": [o.name for o in model.graph.output],
        "tensors": {t: _tensor_info(model, t) for t in names},
        "initializers": inits,
        "nodes": nodes,
    }
    # The model's own record (ONNX metadata_props), e.g. how a trained network was trained:
    # the host driver says whether the weights are trained from it. Only when present, so
    # models without any export as before.
    meta = {p.key: p.value for p in model.model.metadata_props}
    if meta:
        graph["metadata"] = meta
    with open(os.path.join(out_dir, "graph.json"), "w") as f:
        json.dump(graph, f, indent=1)


def _load(path):
    from qonnx.core.modelwrapper import ModelWrapper

    import functional

    try:
        return functional.despecialize(ModelWrapper(path))
    except Exception as e:  # protobuf/onnx decode errors
        raise UserError(f"{path}: not a valid ONNX model ({e})") from None


def export(model_path, parts_dir, out_dir):
    try:
        with open(os.path.join(parts_dir, "partitions.json")) as f:
            listed = json.load(f)
        manifest, segs = listed["partitions"], listed.get("segments", [])
    except (OSError, ValueError, KeyError) as e:
        raise UserError(f"{parts_dir}/partitions.json: not a partition manifest ({e})") from None
    with finn_env.StagedDir(out_dir, ".exec_") as tmp:
        devices = []
        for p in manifest:
            export_model(_load(os.path.join(parts_dir, p["model"])), os.path.join(tmp, p["device"]))
            devices.append({"device": p["device"], "dir": p["device"], "inputs": p["inputs"],
                            "outputs": p["outputs"]})
        segments = []
        for s in segs:
            rel = f"segments/{s['key']}"
            export_model(_load(os.path.join(parts_dir, s["model"])), os.path.join(tmp, rel))
            segments.append({"first_layer": s["first_layer"], "last_layer": s["last_layer"],
                             "dir": rel, "inputs": s["inputs"], "outputs": s["outputs"]})
        whole = _load(model_path)
        export_model(whole, os.path.join(tmp, "whole"))
        listing = {"format": FORMAT, "partitions": devices, "whole": "whole",
                   "inputs": [i.name for i in whole.graph.input],
                   "outputs": [o.name for o in whole.graph.output]}
        if segments:  # only replica plans with a cut copy: other exports stay byte-identical
            listing["segments"] = segments
        with open(os.path.join(tmp, "exec.json"), "w") as f:
            json.dump(listing, f, indent=1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="the unpartitioned HW model")
    ap.add_argument("--partitions", required=True, help="split_partitions.py output dir")
    ap.add_argument("--out-dir", required=True)
    a = ap.parse_args(argv)
    finn_env.setup()
    try:
        export(a.model, a.partitions, a.out_dir)
    except UserError as e:
        print(f"error: export_exec: {e}", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
