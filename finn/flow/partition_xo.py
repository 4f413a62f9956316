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
    # FINN finds vitis_hls and vivado on PATH: put the toolchain's binaries first.
    for tool in (args.vitis_hls, args.vivado):
        if not os.access(tool, os.X_OK):
            print(f"partition_xo.py: {tool} is not an executable: check [vitis] root / "
                  "[vivado] root", file=sys.stderr)
            return USER_ERROR
        os.environ["PATH"] = os.path.dirname(tool) + os.pathsep + os.environ.get("PATH", "")

    from qonnx.core.modelwrapper import ModelWrapper
    from finn.transformation.general import ApplyConfig

    import input_dwc
    import finn.builder.build_dataflow_config as bc
    import finn.builder.build_dataflow_steps as steps
    from finn.transformation.fpgadataflow.vitis_build import CreateVitisXO

    work = tempfile.mkdtemp(prefix="finn_xo_")
    try:
        cfg = bc.DataflowBuildConfig(
            output_dir=work,
            synth_clk_period_ns=1000.0 / args.clk_mhz,
            fpga_part=args.part,
            generate_outputs=[bc.DataflowOutputType.STITCHED_IP],
        )
        model = ModelWrapper(args.inp).transform(ApplyConfig(args.folding))
        with open(args.plan) as f:
            cut = input_dwc.cut_into(json.load(f), args.device)
        if cut is not None:
            model = input_dwc.insert(model, cut["stream_bits"])
        for name in STEPS:
            model = getattr(steps, name)(model, cfg)
        model = model.transform(CreateVitisXO(args.kernel))
        xo = model.get_metadata_prop("vitis_xo")
        if not xo or not os.path.isfile(xo):
            print("partition_xo.py: CreateVitisXO produced no .xo", file=sys.stderr)
            return USER_ERROR
        tmp = args.out + ".tmp"
        shutil.copyfile(xo, tmp)
        os.replace(tmp, args.out)
        return 0
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
