#!/usr/bin/env python3
"""Run ONE FINN+ build step on a model and write the resulting model.

    run_step.py --step NAME --in model.onnx --out model.onnx
                [--folding cfg.json] [--report-dir DIR] [--target-fps N]
                --fpga-part P [--clk-ns 4.0] [--board B]

Each step is a separate process so a build graph can cache every step's model on
its own: a changed folding config re-runs only the steps that consume it.
Exit status 0 on success, 3 on a user error (bad model, unknown step, bad folding).
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import finn_env  # noqa: E402  (must precede every finn import)
import steps  # noqa: E402

USER_ERROR = 3

# Our step names (sub-target names in the build graph) -> FINN step function name.
# Steps not listed resolve to FINN's `step_<name>` or the MobileNet custom library.
ALIASES = {
    "lower_convs": "step_mobilenet_lower_convs",
    "convert_to_hw": "step_convert_to_hw",
    "mobilenet_convert_to_hw": "step_mobilenet_convert_to_hw_layers_separate_th",
}
# Steps that need AMD tools, named so the error says why, not "unknown" (finn/flow/steps.bzl).
NEEDS_AMD_TOOLS = steps.AMD_ONLY_STEPS


class UserError(Exception):
    pass


def step_mnv1_tail(model, cfg):
    """Map MobileNet's tail (MatMul -> Mul -> Add(bias) -> TopK) to HW layers.

    After streamlining the classifier's scale is a scalar Mul before the bias Add;
    moving it past the Add and absorbing Mul+Add into TopK leaves an integer bias
    Add (ElementwiseAdd) and TopK (LabelSelect) that FINN maps to hardware (finn-plus 1.6.1,
    finn/transformation/fpgadataflow/convert_to_hw/elementwise_binary_operation.py and
    label_select.py).
    """
    import numpy as np
    from qonnx.core.datatype import DataType
    from qonnx.transformation.infer_datatypes import InferDataTypes

    from finn.transformation.streamline.absorb import AbsorbScalarMulAddIntoTopK
    from finn.transformation.streamline.reorder import MoveMulPastAdd

    model = model.transform(MoveMulPastAdd())
    model = model.transform(AbsorbScalarMulAddIntoTopK())
    for node in model.graph.node:
        if node.op_type != "Add":
            continue
        for name in node.input:
            b = model.get_initializer(name)
            if b is None or b.size <= 1:
                continue
            rounded = np.round(b)
            if np.max(np.abs(rounded - b)) > 1e-3:
                continue
            model.set_initializer(name, rounded.astype(np.float32))
            bound = int(np.max(np.abs(rounded))) + 1
            bits = 2
            while DataType[f"INT{bits}"].min() > -bound or DataType[f"INT{bits}"].max() < bound - 1:
                bits += 1
            model.set_tensor_datatype(name, DataType[f"INT{bits}"])
    return model.transform(InferDataTypes())


def step_resnet_streamline(model, cfg):
    """Streamline a residual network: finn-plus's StreamlinePlus, then MobileNet's.

    StreamlinePlus (finn-plus 1.6.1, finn/transformation/streamline/streamline_plus.py)
    moves the scales through forks (MoveMulPastFork) and joins (MoveLinearPastEltwiseAdd),
    so both addends of each residual Add become integers on one scale and the Add an
    integer addition; the MobileNet step after it then handles the tail (average pool
    layout, scalar Mul past the classifier) as for the networks without branches.
    """
    from finn.builder.custom_step_library.mobilenet import step_mobilenet_streamline
    from finn.transformation.streamline.streamline_plus import StreamlinePlus

    model = model.transform(StreamlinePlus())
    return step_mobilenet_streamline(model, cfg)


def step_resnet_lower_convs(model, cfg):
    """MobileNet's lowering of convolutions, then the transposes out of the branches.

    Lowering puts an NHWC->NCHW Transpose after every convolution; where the result
    feeds a residual Add or a fork, MobileNet's absorptions cannot reach it. The
    transformations finn-plus 1.6.1's step_resnet50_streamline runs after
    LowerConvsToMatMul move them past joins and forks until they cancel or end in a
    MultiThreshold.
    """
    from finn.builder.custom_step_library.mobilenet import step_mobilenet_lower_convs
    from finn.transformation.streamline.absorb import (
        AbsorbConsecutiveTransposes,
        AbsorbTransposeIntoMultiThreshold,
    )
    from finn.transformation.streamline.reorder import (
        MoveTransposePastEltwise,
        MoveTransposePastFork,
        MoveTransposePastJoinAdd,
    )
    from qonnx.transformation.composed import ComposedTransformation
    from qonnx.transformation.general import GiveReadableTensorNames, GiveUniqueNodeNames
    from qonnx.transformation.infer_data_layouts import InferDataLayouts
    from qonnx.transformation.infer_datatypes import InferDataTypes

    model = step_mobilenet_lower_convs(model, cfg)
    model = model.transform(ComposedTransformation([
        MoveTransposePastJoinAdd(),
        MoveTransposePastFork(),
        MoveTransposePastEltwise(),
        AbsorbConsecutiveTransposes(),
        AbsorbTransposeIntoMultiThreshold(),
    ]))
    for t in (GiveUniqueNodeNames(), GiveReadableTensorNames(), InferDataTypes(),
              InferDataLayouts()):
        model = model.transform(t)
    return model


def step_resnet_convert_to_hw(model, cfg):
    """MobileNet's HW conversion, the Transposes around a max pool cancelled, then a
    DuplicateStreams at every fork.

    A stream has one reader in hardware: each tensor with two consumers (a residual
    block's input, read by the block's first conv and by its shortcut) gets FINN's
    DuplicateStreams (InferDuplicateStreamsLayer, as finn-plus 1.6.1's
    step_resnet50_convert_to_hw places it: after the compute layers); the residual Add
    of two streams is already an ElementwiseAdd (InferElementwiseBinaryOperation).
    """
    from finn.builder.custom_step_library.mobilenet import (
        step_mobilenet_convert_to_hw_layers_separate_th,
    )
    from finn.transformation.fpgadataflow.convert_to_hw.duplicate_streams import (
        InferDuplicateStreamsLayer,
    )
    from finn.transformation.streamline.absorb import AbsorbConsecutiveTransposes
    from finn.transformation.streamline.reorder import MoveTransposePastFork
    from qonnx.transformation.composed import ComposedTransformation
    from qonnx.transformation.general import GiveReadableTensorNames, GiveUniqueNodeNames

    model = step_mobilenet_convert_to_hw_layers_separate_th(model, cfg)
    # InferPool wraps an NCHW MaxPool (ResNet-50's stem) in two Transposes, which cancel the
    # lowering's on either side once moved past the fork after the pool (finn-plus 1.6.1's
    # step_resnet50_convert_to_hw runs AbsorbConsecutiveTransposes after InferPool too)
    model = model.transform(ComposedTransformation([
        MoveTransposePastFork(),
        AbsorbConsecutiveTransposes(),
    ]))
    model = model.transform(InferDuplicateStreamsLayer())
    model = model.transform(GiveUniqueNodeNames())
    return model.transform(GiveReadableTensorNames())


CUSTOM_STEPS = {
    "mnv1_tail": step_mnv1_tail,
    "resnet_streamline": step_resnet_streamline,
    "resnet_lower_convs": step_resnet_lower_convs,
    "resnet_convert_to_hw": step_resnet_convert_to_hw,
}


def resolve_step(name):
    if name in NEEDS_AMD_TOOLS and not (shutil.which("vitis_hls") and shutil.which("vivado")):
        raise UserError(
            f"step '{name}' needs {NEEDS_AMD_TOOLS[name]} (not found on PATH); "
            "use the vitis toolchain on a machine with the AMD tools"
        )
    if name in CUSTOM_STEPS:
        return CUSTOM_STEPS[name]
    from finn.builder import build_dataflow_steps as steps
    from finn.builder.custom_step_library import mobilenet

    fn_name = ALIASES.get(name, "step_" + name.removeprefix("step_"))
    if fn_name in steps.build_dataflow_step_lookup:
        return steps.build_dataflow_step_lookup[fn_name]
    if hasattr(mobilenet, fn_name):
        return getattr(mobilenet, fn_name)
    known = sorted(
        set(CUSTOM_STEPS) | set(ALIASES)
        | {k.removeprefix("step_") for k in steps.build_dataflow_step_lookup}
        | {k.removeprefix("step_") for k in dir(mobilenet) if k.startswith("step_")}
    )
    raise UserError(f"unknown FINN step '{name}'; known steps: {', '.join(known)}")


def load_model(path):
    import onnx
    from qonnx.core.modelwrapper import ModelWrapper

    if not os.path.isfile(path):
        raise UserError(f"{path}: no such file")
    try:
        proto = onnx.load(path)
    except Exception as e:  # protobuf raises DecodeError, onnx its own errors
        raise UserError(f"{path}: not a valid ONNX model ({type(e).__name__}: {e})") from None
    # The full onnx checker rejects FINN's custom-domain nodes, so check the shape
    # of the graph that every step relies on instead.
    if len(proto.graph.node) == 0:
        raise UserError(f"{path}: not a valid ONNX model (the graph has no nodes)")
    if len(proto.graph.input) != 1 or len(proto.graph.output) != 1:
        raise UserError(f"{path}: FINN needs exactly one graph input and one graph output")
    return ModelWrapper(proto)


def check_folding(path, model):
    """The folding config must be JSON naming only layers the model has."""
    try:
        with open(path) as f:
            cfg = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        raise UserError(f"{path}: cannot read folding config: {e}") from None
    if not isinstance(cfg, dict):
        raise UserError(f"{path}: folding config must be a JSON object keyed by layer name")
    names = {n.name for n in model.graph.node}
    missing = sorted(k for k in cfg if k != "Defaults" and k not in names)
    if missing:
        raise UserError(
            f"{path}: folding config names layer(s) not in the model: {', '.join(missing)}"
        )
    if "Defaults" not in cfg:
        # qonnx ApplyConfig requires it; an empty one changes nothing.
        cfg["Defaults"] = {}
    return cfg


def make_cfg(args, out_dir, folding_file, spec_file=None):
    from finn.builder.build_dataflow_config import (
        DataflowBuildConfig,
        DataflowOutputType,
        ShellFlowType,
    )

    return DataflowBuildConfig(
        output_dir=str(out_dir),
        synth_clk_period_ns=args.clk_ns,
        generate_outputs=[DataflowOutputType.ESTIMATE_REPORTS],
        # the board's part (its toolchains/fpga_platforms file, through the finn_steps rule);
        # FINN's board name only for its synthesis steps, which this project runs elsewhere
        fpga_part=args.fpga_part,
        board=args.board,
        shell_flow_type=ShellFlowType.VITIS_ALVEO,
        target_fps=args.target_fps,
        folding_config_file=folding_file,
        specialize_layers_config_file=spec_file,
        mvau_wwidth_max=args.mvau_wwidth_max,
        save_intermediate_models=False,
        verify_steps=[],
    )


def run(args):
    work = Path(tempfile.mkdtemp(prefix="finn_step_"))
    # setup() points FINN_BUILD_DIR into `work`; restored below, or a later setup() in this
    # process (the tests call main() several times) would make `work` again after its removal
    prev_build_dir = os.environ.get("FINN_BUILD_DIR")
    try:
        finn_env.setup(str(work / "build"))
        step = resolve_step(args.step)
        model = load_model(args.inp)
        folding_file = None
        spec_file = None
        if args.specialize_config:
            spec = check_folding(args.specialize_config, model)
            spec_file = work / "specialize.json"
            spec_file.write_text(json.dumps(spec))
        if args.folding:
            cfg = check_folding(args.folding, model)
            folding_file = work / "folding.json"
            folding_file.write_text(json.dumps(cfg))
        cfg = make_cfg(args, work / "out", folding_file, spec_file)
        (work / "out" / "report").mkdir(parents=True, exist_ok=True)
        (work / "out" / "intermediate_models").mkdir(parents=True, exist_ok=True)
        model = step(model, cfg)
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".tmp")
        model.save(str(tmp))
        os.replace(tmp, out)
        if args.report_dir:
            rep = Path(args.report_dir)
            if rep.exists():
                shutil.rmtree(rep)
            shutil.copytree(work / "out" / "report", rep)
    finally:
        if prev_build_dir is None:
            os.environ.pop("FINN_BUILD_DIR", None)
        else:
            os.environ["FINN_BUILD_DIR"] = prev_build_dir
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description="Run one FINN+ build step.")
    ap.add_argument("--step", required=True)
    ap.add_argument("--in", dest="inp", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--folding", help="folding config JSON (apply_folding_config)")
    ap.add_argument("--specialize-config", help="specialize-layers config JSON (specialize_layers)")
    ap.add_argument("--report-dir", help="copy FINN's report/ directory here")
    ap.add_argument("--target-fps", type=int, default=None)
    ap.add_argument("--clk-ns", type=float, default=4.0)
    ap.add_argument("--fpga-part", required=True,
                    help="the board's part: `part` of its toolchains/fpga_platforms file")
    ap.add_argument("--board", default=None, help="FINN's board name (its synthesis steps only)")
    ap.add_argument("--mvau-wwidth-max", type=int, default=36)
    ap.add_argument("--keep", action="store_true", help="keep the scratch build directory")
    args = ap.parse_args(argv)
    try:
        run(args)
    except UserError as e:
        print(f"error: step {args.step}: {e}", file=sys.stderr)
        return USER_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())
