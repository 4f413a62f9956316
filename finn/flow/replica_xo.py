#!/usr/bin/env python3
"""Every FINN kernel ONE device of a replica plan carries, as Vitis kernels (.xo).

    replica_xo.py --model hw.onnx --folding fpga0.json --plan fpga0.plan.json --device fpga0
                  --part xcu280-fsvh2892-2L-e --clk-mhz 250
                  --vitis-hls .../vitis_hls --vivado .../vivado --out-dir finn_xo/

A replica plan (finn/README.md "Replicas") puts copies of the pipeline on a card: a whole
copy is kernel `finn_whole`, a segment of a copy cut across cards `finn_<first>__<last>`;
copies spanning the same layers share one kernel (several CUs), as deploy-tool names them
(deploy/tool/src/replicas.rs `segment_kernel_name`, whose sim description the test checks
these names against). For each distinct kernel on the device: its layers cut out of the
unpartitioned HW model (split_partitions.split, so a segment reads one stream), then the
same steps as a single-copy partition (partition_xo.build_xo: the plan's folding, FINN's
width converter where it receives a cut narrower or wider than its first layer, FINN's IP
steps, CreateVitisXO). Writes OUT_DIR/<kernel>.xo for each, the directory replaced as a
whole. The IP steps need vitis_hls and Vivado, which the project's machines do not have:
this script has run there only with those steps stood in (finn/tests/test_replica_xo.py).
Exit status 0 on success, 3 on a user error.
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import finn_env  # noqa: E402

USER_ERROR = 3


class UserError(Exception):
    pass


def kernel_name(plan, seg):
    """deploy-tool's name of a segment's kernel (deploy/tool/src/replicas.rs)."""
    layers = plan["layers"]
    if seg["first_layer"] == layers[0]["name"] and seg["last_layer"] == layers[-1]["name"]:
        return "finn_whole"
    return f"finn_{seg['first_layer']}__{seg['last_layer']}"


def kernels(plan, device):
    """[(kernel, segment, cut_bits)] of the device, one per distinct kernel in copy order;
    cut_bits is the width of the cut feeding the segment, None at a copy's start."""
    if not plan.get("replicas"):
        raise UserError(f"the plan of {device} lists no `replicas`; a single-copy plan's "
                        "kernel is built by partition_xo.py")
    out = {}
    for r in plan["replicas"]:
        for seg in r["segments"]:
            if seg["device"] != device:
                continue
            cuts = [c for c in r.get("cuts", [])
                    if c["to_device"] == device and c["to_layer"] == seg["first_layer"]]
            bits = cuts[0]["stream_bits"] if cuts else None
            name = kernel_name(plan, seg)
            if name in out and out[name][2] != bits:
                raise UserError(f"kernel {name} on {device} receives {out[name][2]}-bit and "
                                f"{bits}-bit cuts (copy {r['index']}); one kernel has one "
                                "input width")
            out.setdefault(name, (name, seg, bits))
    if not out:
        raise UserError(f"the replica plan puts no copy on {device}")
    return list(out.values())


def segment_model(model, seg):
    """The layers first_layer..last_layer of the HW model as a model of their own."""
    import split_partitions

    names = [n.name for n in model.graph.node]
    try:
        lo, hi = names.index(seg["first_layer"]), names.index(seg["last_layer"])
    except ValueError as e:
        raise UserError(f"the plan names a layer the model does not have ({e})") from None
    side = {n: ("before" if i < lo else "seg" if i <= hi else "after")
            for i, n in enumerate(names)}
    try:
        parts = split_partitions.split(model, side)
    except split_partitions.UserError as e:
        raise UserError(f"segment {seg['first_layer']}..{seg['last_layer']}: {e}") from None
    (part,) = [p for d, p, _, _ in parts if d == "seg"]
    got = [n.name for n in part.graph.node]
    if got != list(seg["layers"]):
        raise UserError(f"segment {seg['first_layer']}..{seg['last_layer']}: the model's "
                        f"layers {got} are not the plan's {seg['layers']}")
    return part


def build(model_path, folding, plan, device, part, clk_mhz, out_dir):
    """OUT_DIR/<kernel>.xo for every kernel of the device (partition_xo.build_xo each)."""
    from qonnx.core.modelwrapper import ModelWrapper

    import partition_xo

    todo = kernels(plan, device)
    with finn_env.StagedDir(out_dir, ".replica_xo_") as tmp:
        for name, seg, bits in todo:
            sub = segment_model(ModelWrapper(model_path), seg)
            err = partition_xo.build_xo(sub, folding, bits, name, part, clk_mhz,
                                        os.path.join(tmp, name + ".xo"))
            if err:
                raise UserError(err)
    return [name for name, _, _ in todo]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True, help="the unpartitioned HW model the plan splits")
    ap.add_argument("--folding", required=True, help="the plan's folding config for this device")
    ap.add_argument("--plan", required=True, help="the plan (or this device's slice of it)")
    ap.add_argument("--device", required=True)
    ap.add_argument("--part", required=True)
    ap.add_argument("--clk-mhz", type=float, required=True)
    ap.add_argument("--vitis-hls", required=True, help="the toolchain's vitis_hls")
    ap.add_argument("--vivado", required=True, help="the toolchain's vivado")
    ap.add_argument("--out-dir", required=True)
    a = ap.parse_args(argv)
    finn_env.setup()
    import partition_xo

    try:
        err = partition_xo.tools_on_path(a.vitis_hls, a.vivado)
        if err:
            raise UserError(err)
        try:
            with open(a.plan) as f:
                plan = json.load(f)
        except (OSError, ValueError) as e:
            raise UserError(f"{a.plan}: not a partition plan ({e})") from None
        build(a.model, a.folding, plan, a.device, a.part, a.clk_mhz, a.out_dir)
    except (UserError, KeyError, TypeError) as e:
        print(f"replica_xo.py: {a.plan}: {e}", file=sys.stderr)
        return USER_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())
