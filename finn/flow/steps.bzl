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
