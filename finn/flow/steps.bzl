# The FINN build steps of this project, stated once. BUCK files and rules/finn.bzl load this
# file; the Python flow scripts read the same literals (finn/flow/steps.py: the literal
# assignments), so the step lists cannot drift apart.

# The estimate-only front end of finn-plus 1.6.1 that the `sim` toolchain runs, in order.
# "name=step" exposes FINN step `step` as sub-target `name` of a finn_steps target.
FRONT_END_STEPS = [
    "qonnx_to_finn",
    "tidy_up",
    "streamline=mobilenet_streamline",
    "mnv1_tail",
    "lower_convs",
    "convert_to_hw=mobilenet_convert_to_hw",
    "create_dataflow_partition",
    "specialize_layers",
    "target_fps_parallelization",
    "apply_folding_config",
    "minimize_bit_width",
    "generate_estimate_reports",
]

# The same front end for residual networks (finn/resnet_tiny): streamlining through forks and
# joins, the transposes of lowering moved out of the branches, and a DuplicateStreams at
# every fork (the custom steps of finn/flow/run_step.py) replace MobileNet's three steps.
_RESNET_STEPS = {
    "convert_to_hw": "convert_to_hw=resnet_convert_to_hw",
    "lower_convs": "lower_convs=resnet_lower_convs",
    "streamline": "streamline=resnet_streamline",
}
RESNET_FRONT_END_STEPS = [_RESNET_STEPS.get(s.split("=")[0], s) for s in FRONT_END_STEPS]

# Steps that need AMD tools, with the tools they need (finn-plus 1.6.1,
# finn/builder/build_dataflow_steps.py: the HLSSynthIP, CreateStitchedIP, SynthOutOfContext
# and rtlsim calls of these steps). They run only with `-c fpga.toolchain=vitis`.
AMD_ONLY_STEPS = {
    "create_stitched_ip": "Vivado",
    "generate_hardware": "vitis_hls",
    "hw_ipgen": "vitis_hls",
    "measure_rtlsim_performance": "Vivado XSI",
    "out_of_context_synthesis": "Vivado",
    "prepare_synthesis": "vitis_hls, v++ and Vivado",
    "set_fifo_depths": "vitis_hls and Vivado XSI",
    "synthesize_bitfile": "v++ and Vivado",
}

# Every script the FINN toolchain runs, by its path, with the files it runs (itself first) and
# imports or reads: each action's inputs are its own script's files, so editing one script
# re-runs the actions that run it (or import it) and no other FINN action. finn/flow/BUCK
# makes one filegroup of each (`flow_script_target`), which toolchains//:finn hands out.
FLOW_SCRIPTS = {
    "finn/flow/exec_reference.py": ["exec_reference.py", "finn_env.py", "functional.py"],
    "finn/flow/export_estimates.py": ["export_estimates.py", "finn_env.py"],
    "finn/flow/export_exec.py": ["export_exec.py", "finn_env.py", "functional.py"],
    "finn/flow/partition_xo.py": ["partition_xo.py", "finn_env.py", "input_dwc.py"],
    "finn/flow/replica_xo.py": [
        "replica_xo.py",
        "finn_env.py",
        "input_dwc.py",
        "partition_xo.py",
        "split_partitions.py",
    ],
    # report.py prints the paper's figures from their one copy.
    "finn/flow/report.py": ["report.py", "//paper:figures"],
    "finn/flow/run_step.py": ["run_step.py", "finn_env.py", "steps.bzl", "steps.py"],
    "finn/flow/split_partitions.py": ["split_partitions.py", "finn_env.py"],
    "finn/flow/type_variants.py": ["type_variants.py", "finn_env.py"],
    "finn/models/gen_model.py": ["//finn/models:gen_model.py"],
}

def flow_script_target(script):
    """The name of the filegroup of FLOW_SCRIPTS entry `script` in finn/flow/BUCK."""
    return script.split("/")[-1].split(".")[0]
