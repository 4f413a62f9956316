#!/usr/bin/env python3
"""Turn ONE device's FINN partition into a Vitis kernel (.xo) with FINN+'s own steps.

    partition_xo.py --in fpga0.onnx --folding fpga0.json --kernel finn_fpga0
                    --plan fpga0.plan.json --device fpga0
                    --part xcu280-fsvh2892-2L-e --clk-mhz 250 --out finn_fpga0.xo

The `vitis` toolchain's FINN kernel: the partition plan's folding for this device (FINN's
folding-config format, applied as step_apply_folding_config does, so the bitstream has the
PE/SIMD the partitioner priced, not the exported model's), on a device that receives a cut
FINN's data-width converter from the cut's width to the first layer's (input_dwc.py, as
InsertDWC puts it on that edge), then HLS/RTL code generation and IP generation of every
layer, FIFO sizing, the stitched IP, then FINN's CreateVitisXO packaging (finn-plus 1.6.1,
src/finn/builder/build_dataflow_steps.py and transformation/fpgadataflow/vitis_build.py).
These steps need vitis_hls and Vivado; the project's machines have neither, so this
script has not run there (README, "Limits").
Exit status 0 on success, 3 on a user error.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import finn_env  # noqa: E402, F401  (used for its side effects; precedes every finn import)

USER_ERROR = 3
STEPS = ["step_hw_codegen", "step_hw_ipgen", "step_set_fifo_depths", "step_create_stitched_ip"]


def tools_on_path(vitis_hls, vivado):
    """FINN finds vitis_hls and vivado on PATH: put the toolchain's binaries first. Returns
    an error message when one is not an executable, else None."""
    for tool in (vitis_hls, vivado):
        if not os.access(tool, os.X_OK):
            return f"{tool} is not an executable: check [vitis] root / [vivado] root"
        os.environ["PATH"] = os.path.dirname(tool) + os.pathsep + os.environ.get("PATH", "")
    return None


def ip_steps(model, kernel, part, clk_mhz):
    """FINN's IP steps and CreateVitisXO on a model with its folding and input converter in
    place: the path of the .xo it wrote (inside FINN_BUILD_DIR), or None."""
    import finn.builder.build_dataflow_config as bc
    import finn.builder.build_dataflow_steps as steps
    from finn.transformation.fpgadataflow.vitis_build import CreateVitisXO

    work = tempfile.mkdtemp(prefix="finn_xo_")
    try:
        cfg = bc.DataflowBuildConfig(
            output_dir=work,
            synth_clk_period_ns=1000.0 / clk_mhz,
            fpga_part=part,
            generate_outputs=[bc.DataflowOutputType.STITCHED_IP],
        )
        for name in STEPS:
            model = getattr(steps, name)(model, cfg)
        model = model.transform(CreateVitisXO(kernel))
        xo = model.get_metadata_prop("vitis_xo")
        return xo if xo and os.path.isfile(xo) else None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def build_xo(model, folding, cut_bits, kernel, part, clk_mhz, out):
    """One FINN kernel: `folding` (a FINN folding config) applied to `model`, FINN's width
    converter first when `cut_bits` (the cut it receives, or None) differs from its first
    layer's input, then `ip_steps`; the .xo copied to `out` atomically. Returns an error
    message or None."""
    from finn.transformation.general import ApplyConfig

    import input_dwc

    model = model.transform(ApplyConfig(folding))
    if cut_bits is not None:
        model = input_dwc.insert(model, cut_bits)
    xo = ip_steps(model, kernel, part, clk_mhz)
    if xo is None:
        return f"CreateVitisXO produced no .xo for {kernel}"
    tmp = out + ".tmp"
    shutil.copyfile(xo, tmp)
    os.replace(tmp, out)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--in", dest="inp", required=True)
    ap.add_argument("--folding", required=True, help="the plan's folding config for this device")
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--plan", required=True, help="the plan (or this device's slice of it)")
    ap.add_argument("--device", required=True)
    ap.add_argument("--part", required=True)
    ap.add_argument("--clk-mhz", type=float, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--vitis-hls", required=True, help="the toolchain's vitis_hls")
    ap.add_argument("--vivado", required=True, help="the toolchain's vivado")
    args = ap.parse_args()
    err = tools_on_path(args.vitis_hls, args.vivado)
    if err:
        print(f"partition_xo.py: {err}", file=sys.stderr)
        return USER_ERROR

    from qonnx.core.modelwrapper import ModelWrapper

    import input_dwc

    with open(args.plan) as f:
        cut = input_dwc.cut_into(json.load(f), args.device)
    err = build_xo(ModelWrapper(args.inp), args.folding, cut["stream_bits"] if cut else None,
                   args.kernel, args.part, args.clk_mhz, args.out)
    if err:
        print(f"partition_xo.py: {err}", file=sys.stderr)
        return USER_ERROR
    return 0


if __name__ == "__main__":
    sys.exit(main())
