"""The provider every kernel rule returns (AuroraFlow RTL, HLS, FINN partitions), and the one
the link step reads. Neutral: no rule family owns it.
"""

KernelInfo = provider(
    doc = "A kernel for the v++ link step. `name`: kernel (and default CU) name; `kind`: " +
          "\"rtl\", \"hls\" or \"finn\"; `toolchain`: \"sim\" or \"vitis\" (from " +
          "FpgaToolchainInfo); `xo`: the .xo (vitis) or None; `kernel_xml`: kernel.xml or " +
          "None; `model`: the simulation artifact (Verilator model dir, C-simulation shared " +
          "library, partition model) or None with vitis; `ports`: list of dicts {name, kind " +
          "(axis | m_axi | axilite | clock | diff_clock | reset | gt), dir (in | out | inout), " +
          "width (bits), bundle?, tlast?, tkeep?}; `params`: dict of parameters; `control`: " +
          "XRT control protocol (ap_ctrl_none | ap_ctrl_hs | ap_ctrl_chain); `description`: " +
          "Artifact, kernel.json with all of the above (what the link tool reads); `platforms`: " +
          "the boards (platform names) the kernel is built for, None where its `params.part` " +
          "says (AuroraFlow); `xos`: vitis, platform name -> that board's .xo (HLS kernels: one " +
          "per board, the link takes its own board's), {} where `xo` is the only one.",
    fields = {
        "control": provider_field(str),
        "description": provider_field(Artifact),
        "kernel_xml": provider_field(Artifact | None, default = None),
        "kind": provider_field(str),
        "model": provider_field(Artifact | None, default = None),
        "name": provider_field(str),
        "params": provider_field(dict),
        "platforms": provider_field(list | None, default = None),
        "ports": provider_field(list),
        "toolchain": provider_field(str),
        "xo": provider_field(Artifact | None, default = None),
        "xos": provider_field(dict, default = {}),
    },
)

def kernel_description(ctx: AnalysisContext, info: dict) -> Artifact:
    """Writes `kernel.json` for a kernel: the fields of KernelInfo, artifacts as paths
    (with_inputs, so their content keys every action that reads the description)."""
    out = ctx.actions.declare_output("kernel.json")

    # with_inputs makes write_json return cmd_args (the file + the artifacts it names); the
    # provider field holds the file itself, consumers add the kernel's xo/model as inputs
    ctx.actions.write_json(out, info, with_inputs = True, pretty = True)
    return out
