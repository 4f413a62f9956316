#!/usr/bin/env python3
"""Run FINN+'s own multi-FPGA partitioner (finn-plus 1.6.1, AuroraPartitioner,
python-mip + CBC) on a FINN HW model and report its placement and solve time.

    finnplus_partition.py --in model.onnx --devices N --topology chain|returnchain|circle
                          --out result.json

The result holds node -> device, or the error FINN+ raised (e.g. for `circle`).
"""

import argparse
import atexit
import json
import os
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "flow"))
import finn_env  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--in", dest="inp", required=True)
    ap.add_argument("--devices", type=int, required=True)
    ap.add_argument("--topology", default="chain")
    ap.add_argument("--max-util", type=float, default=0.8)
    ap.add_argument("--ideal-util", type=float, default=0.7)
    ap.add_argument("--timeout", type=int, default=100)
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    work = tempfile.mkdtemp(prefix="finnplus_part_")
    atexit.register(shutil.rmtree, work, ignore_errors=True)  # on every exit path
    finn_env.setup(os.path.join(work, "build"))
    from qonnx.core.modelwrapper import ModelWrapper

    from finn.builder.build_dataflow_config import (
        DataflowBuildConfig,
        DataflowOutputType,
        MFTopology,
        MIPSolver,
        PartitioningConfiguration,
        PartitioningStrategy,
        ShellFlowType,
    )
    from finn.transformation.fpgadataflow.multifpga.partition_model import PartitionForMultiFPGA

    out_dir = os.path.join(work, "out")
    os.makedirs(os.path.join(out_dir, "report"), exist_ok=True)
    pcfg = PartitioningConfiguration(
        num_fpgas=a.devices,
        topology=MFTopology(a.topology),
        partition_strategy=PartitioningStrategy.RESOURCE_UTILIZATION,
        max_utilization=a.max_util,
        ideal_utilization=a.ideal_util,
        partition_solver=MIPSolver.CBC,
        partition_solver_timeout=a.timeout,
    )
    cfg = DataflowBuildConfig(
        output_dir=out_dir, synth_clk_period_ns=4.0,
        generate_outputs=[DataflowOutputType.ESTIMATE_REPORTS], board="U280",
        shell_flow_type=ShellFlowType.VITIS_ALVEO, partitioning_configuration=pcfg,
    )
    model = ModelWrapper(a.inp)
    result = {"devices": a.devices, "topology": a.topology, "solver": "python-mip 1.17 CBC"}
    t0 = time.perf_counter()
    try:
        model = model.transform(PartitionForMultiFPGA(cfg))
        result["seconds"] = time.perf_counter() - t0
        from qonnx.custom_op.registry import getCustomOp

        result["mapping"] = {n.name: int(getCustomOp(n).get_nodeattr("device_id")) for n in model.graph.node}
    except Exception as e:  # FINN+ raises its own and NotImplementedError types
        result["seconds"] = time.perf_counter() - t0
        result["error"] = f"{type(e).__name__}: {e}"
    with open(a.out, "w") as f:
        json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
