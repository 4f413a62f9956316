"""The AuroraFlow link kernel as a build target: parameters checked at analysis, then either
the Vivado flow (toolchains//:fpga kind `vitis`: Aurora IP generation + package_xo, one
local-only, cache-uploadable action) or the open-source flow (`sim`: a Verilator model of
the kernel with the behavioural Aurora core). Both give the same KernelInfo and kernel.json,
which the link and deployment steps read (kernel name, ports with widths, parameters).

Actions: `aurora_flow_render` (`aurora-flow-desc package`: the per-instance top, XDC,
kernel.xml and params.tcl from `params.json`), then `verilator_kernel_model` (`model/`, sim)
or `vivado_package_xo` (`<name>.xo`, vitis), and `kernel.json` (params include `cable_m`,
`rx_headroom_words`, `rx_headroom_beats`, `inflight_need_beats`). Sub-targets
`[description]`, `[package]`, `[params]`. A kernel is packaged for one board, `platform` (its
part; `instance` one of its file's QSFP ports, checked here and by the packager; the link
step refuses it on another board). The FPGA tools come from `toolchains//:fpga`
(`FpgaToolchainInfo.kind` picks sim or vitis); their limits and defaults come from
`kernel.toml` (`desc.bzl` beside it, generated). The rule lives beside the kernel, on the
domain's floor, with the file its description generates: rules/ holds no domain output.
Parameters: [docs/auroraflow.md](auroraflow.md).
"""

load("//rules:kernel.bzl", "KernelInfo", "kernel_description")
load("//rules:verilator.bzl", "HDL_TOOLCHAIN_ATTRS", "include_dirs", "verilator_model")
load("//rules/toolchains:aurora_flow.bzl", "AuroraFlowToolchainInfo")
load("//rules/toolchains:fpga.bzl", "FpgaToolchainInfo", "fpga_platform")
load("//rules/toolchains:fpga_platforms.bzl", "FPGA_PLATFORMS")
load(":desc.bzl", "AXILITE", "FLOW_CONTROL", "LINK", "PARAMETERS", "headroom_beats", "need_beats")

def _rtl_value(attr: str, value) -> int:
    """A parameter's value as the RTL takes it: booleans as 0/1, enums by their number."""
    values = PARAMETERS[attr].get("values")
    if values:
        return values[value]
    if type(value) == "bool":
        return 1 if value else 0
    return value

def _limit_error(attr: str, value, fifo_width: int):
    """What is wrong with `value` by the parameter's own limits (kernel.toml), or None."""
    p = PARAMETERS[attr]
    unit = " ({})".format(p["unit"]) if p["unit"] else ""
    values = p.get("values")
    if values and value not in values:
        return "'{}' is not one of {}".format(value, ", ".join(sorted(values)))
    allowed = p.get("allowed")
    if allowed and value not in allowed:
        return "{}: must be one of {}{}".format(value, ", ".join([str(v) for v in allowed]), unit)
    if p["power_of_two"] and (value <= 0 or (value & (value - 1)) != 0):
        return "{}: must be a power of two{}".format(value, unit)
    if "min_words" in p:
        depth = value // fifo_width
        if depth < p["min_words"] or depth > p["max_words"]:
            return "{} / {} = {} words: the FIFO depth must be {}..{} words".format(
                value,
                fifo_width,
                depth,
                p["min_words"],
                p["max_words"],
            )
    if "min" in p and (value < p["min"] or value > p["max"]):
        return "{}: must be {}..{}{}".format(value, p["min"], p["max"], unit)
    return None

def _check(ctx: AnalysisContext) -> dict:
    """Validates the parameters; returns them with the derived thresholds filled in."""
    a = ctx.attrs

    def bad(param, msg):
        fail("{}: parameter {}: {}".format(ctx.label, param, msg))

    cable_m = a.cable_m if a.cable_m >= 0 else FLOW_CONTROL["default_cable_m"]
    for attr, p in PARAMETERS.items():
        if p["default"] == None and attr != "cable_m":
            continue  # derived thresholds: checked against each other below
        value = cable_m if attr == "cable_m" else getattr(a, attr)
        err = _limit_error(attr, value, a.fifo_width)
        if err:
            bad(attr, err)
    depth = a.rx_fifo_size // a.fifo_width
    full = a.rx_fifo_prog_full if a.rx_fifo_prog_full > 0 else depth // 2
    empty = a.rx_fifo_prog_empty if a.rx_fifo_prog_empty > 0 else depth // 8
    if full >= depth:
        bad("rx_fifo_prog_full", "{} must be below the RX FIFO depth {} words".format(full, depth))
    if empty >= full:
        bad("rx_fifo_prog_empty", "{} must be below rx_fifo_prog_full ({})".format(empty, full))
    board = FPGA_PLATFORMS[fpga_platform(ctx.attrs._fpga[FpgaToolchainInfo], ctx.label, a.platform).name]
    if a.instance not in board["qsfp_ports"]:
        bad("instance", "{}: the {} has QSFP ports {} (its platform file)".format(a.instance, board["board"], board["qsfp_ports"]))
    if a.use_framing and a.stream_frame_words != 0:
        bad("stream_frame_words", "{} is for streaming; with use_framing the user's frames are the wire's".format(a.stream_frame_words))

    # in-flight budget (kernel.toml [flow_control]): what still arrives after an XOFF must fit
    # above prog_full, or a stalled receiver loses data
    headroom_words = depth - full
    headroom = headroom_beats(headroom_words, a.fifo_width)
    need = need_beats(cable_m)
    if headroom < need:
        bad("rx_fifo_prog_full", ("headroom {} words = {} link beats (depth {} - prog_full {}) " +
                                  "is below the {} beats in flight with cable_m = {} ({} + {} x {} m); " +
                                  "raise rx_fifo_size or lower rx_fifo_prog_full").format(
            headroom_words,
            headroom,
            depth,
            full,
            need,
            cable_m,
            FLOW_CONTROL["fixed_inflight_beats"],
            FLOW_CONTROL["beats_per_metre"],
            cable_m,
        ))
    return {
        "aurora_version": a.aurora_version,
        "cable_m": cable_m,
        "drain_axi_on_reset": 1 if a.drain_axi_on_reset else 0,
        "fifo_width": a.fifo_width,
        "inflight_need_beats": need,
        "ins_loss_nyq": a.ins_loss_nyq,
        "instance": a.instance,
        "kernel_name": a.kernel_name or ctx.label.name,
        "part": a.part or board["part"],
        "rx_eq_mode": a.rx_eq_mode,
        "rx_fifo_prog_empty": empty,
        "rx_fifo_prog_full": full,
        "rx_fifo_size": a.rx_fifo_size,
        "rx_headroom_beats": headroom,
        "rx_headroom_words": headroom_words,
        "sim_ip_reset_cycles": a.sim_ip_reset_cycles,
        "stream_frame_words": a.stream_frame_words,
        "tx_fifo_size": a.tx_fifo_size,
        "use_framing": 1 if a.use_framing else 0,
        "xon_on_empty": 1 if a.xon_on_empty else 0,
    }

def _ports(p: dict) -> list:
    framing = p["use_framing"] == 1
    return [
        {"dir": "in", "kind": "clock", "name": "ap_clk", "width": 1},
        {"dir": "in", "kind": "reset", "name": "ap_rst_n", "width": 1},
        {"dir": "in", "kind": "clock", "name": "init_clk", "width": 1, "freq_mhz": LINK["init_clk_mhz"]},
        {"dir": "in", "kind": "axis", "name": "tx_axis", "width": 8 * p["fifo_width"], "tlast": framing, "tkeep": framing},
        {"dir": "out", "kind": "axis", "name": "rx_axis", "width": 8 * p["fifo_width"], "tlast": framing, "tkeep": framing},
        {"addr_width": AXILITE["addr_width"], "dir": "in", "kind": "axilite", "name": AXILITE["name"], "range": AXILITE["range"], "width": AXILITE["width"]},
        {"dir": "in", "freq_mhz": LINK["refclk_mhz"], "kind": "diff_clock", "name": "gt_refclk_{}".format(p["instance"]), "width": 1},
        {"dir": "inout", "kind": "gt", "lanes": LINK["lanes"], "name": "gt_port", "width": LINK["lanes"]},
    ]

def _aurora_flow_kernel_impl(ctx: AnalysisContext) -> list[Provider]:
    params = _check(ctx)
    name = params["kernel_name"]
    fpga = ctx.attrs._fpga[FpgaToolchainInfo]
    board = fpga_platform(fpga, ctx.label, ctx.attrs.platform)
    desc_tool = ctx.attrs._aurora_flow[AuroraFlowToolchainInfo].desc_tool
    json_params = dict(params)
    json_params["rtl_files"] = ctx.attrs.rtl + ctx.attrs.rtl_headers
    params_file = ctx.actions.declare_output("params.json")

    # with_inputs: the JSON names the RTL files, so their content must key the actions too
    params_json = ctx.actions.write_json(params_file, json_params, with_inputs = True, pretty = True)

    # the per-instance top, XDC, kernel.xml and Vivado parameter script
    package = ctx.actions.declare_output("package", dir = True)
    ctx.actions.run(
        cmd_args(desc_tool, "package", "--platform", board.desc, ctx.attrs.description, params_json, package.as_output()),
        category = "aurora_flow_render",
    )

    xo = None
    kernel_xml = None
    model = None
    if fpga.kind == "vitis":
        xo = ctx.actions.declare_output(name + ".xo")
        kernel_xml = ctx.actions.declare_output(name + ".xml")
        ctx.actions.run(
            cmd_args(
                "bash",
                ctx.attrs.build_xo,
                desc_tool,
                ctx.attrs.description,
                board.desc,
                fpga.tools["vivado"],
                params_json,
                xo.as_output(),
                kernel_xml.as_output(),
                hidden = ctx.attrs.packaging + [fpga.version],
            ),
            category = "vivado_package_xo",
            # Vivado needs a licence and an install: here or on a worker offering
            # fpga-tools=vitis (docs/guide.md, "Remote execution"); shared through the cache.
            allow_cache_upload = True,
        )
        main = xo
    else:
        gparams = [
            "-G{}={}".format(p["rtl"], _rtl_value(attr, params[attr]))
            for attr, p in PARAMETERS.items()
        ]
        model = verilator_model(
            ctx,
            [
                "--cc",
                "--build",
                "-j",
                "2",
                "-Wall",
                "-DAURORA_SIM",
                gparams,
                "--top-module",
                "aurora_flow",
                "--prefix",
                "V" + name,
                include_dirs(ctx.attrs.rtl_headers),
                ctx.attrs.rtl,
                ctx.attrs.sim_srcs,
            ],
            ctx.attrs.rtl_headers,
            "verilator_kernel_model",
        )
        main = model

    ports = _ports(params)
    description = kernel_description(ctx, {
        "control": "ap_ctrl_none",
        "kernel_xml": kernel_xml,
        "kind": "rtl",
        "model": model,
        "name": name,
        "params": params,
        "ports": ports,
        "toolchain": fpga.kind,
        "xo": xo,
    })
    info = KernelInfo(
        control = "ap_ctrl_none",
        description = description,
        kernel_xml = kernel_xml,
        kind = "rtl",
        model = model,
        name = name,
        params = params,
        ports = ports,
        toolchain = fpga.kind,
        xo = xo,
    )
    return [
        DefaultInfo(
            default_output = main,
            sub_targets = {
                "description": [DefaultInfo(default_output = description)],
                "package": [DefaultInfo(default_output = package)],
                "params": [DefaultInfo(default_output = params_file)],
            },
        ),
        info,
    ]

aurora_flow_kernel = rule(
    impl = _aurora_flow_kernel_impl,
    attrs = {
        "aurora_version": attrs.string(default = "12.0", doc = "aurora_64b66b IP version (13.0 for Vivado >= 2024.2)"),
        "build_xo": attrs.source(doc = "the vitis packaging script (tcl/build_xo.sh)"),
        "description": attrs.source(doc = "the kernel description, hw/aurora_flow/kernel.toml"),
        "cable_m": attrs.int(default = -1, doc = "fibre metres of the link (cable + switch), sizes the RX headroom; -1: kernel.toml [flow_control] default_cable_m"),
        "drain_axi_on_reset": attrs.bool(default = PARAMETERS["drain_axi_on_reset"]["default"]),
        "fifo_width": attrs.int(default = PARAMETERS["fifo_width"]["default"], doc = "user stream width in bytes: 32 or 64"),
        "ins_loss_nyq": attrs.int(default = PARAMETERS["ins_loss_nyq"]["default"]),
        "instance": attrs.int(doc = "the QSFP port: one of the board's (its platform file's [[qsfp]] ports)"),
        "kernel_name": attrs.string(default = "", doc = "kernel and CU name; default: the target name"),
        "packaging": attrs.list(attrs.source(), default = [], doc = "Tcl scripts build_xo uses"),
        "part": attrs.string(default = "", doc = "the FPGA part; \"\": the board's (its platform file)"),
        "platform": attrs.string(default = "", doc = "the board (a file of toolchains/fpga_platforms/): its part, and the QSFP ports `instance` may be; \"\": the FPGA toolchain's default"),
        "rtl": attrs.list(attrs.source()),
        "rtl_headers": attrs.list(attrs.source(), default = [], doc = "files the RTL `include`s; their directories become -I"),
        "rx_eq_mode": attrs.string(default = PARAMETERS["rx_eq_mode"]["default"]),
        "rx_fifo_prog_empty": attrs.int(default = 0, doc = "words; 0 = depth / 8"),
        "rx_fifo_prog_full": attrs.int(default = 0, doc = "words; 0 = depth / 2"),
        "rx_fifo_size": attrs.int(default = PARAMETERS["rx_fifo_size"]["default"], doc = "bytes, a power of two"),
        "sim_ip_reset_cycles": attrs.int(default = PARAMETERS["sim_ip_reset_cycles"]["default"], doc = "init_clk cycles of core reset in the simulation model"),
        "sim_srcs": attrs.list(attrs.source(), default = [], doc = "behavioural Aurora core (sim)"),
        "stream_frame_words": attrs.int(default = PARAMETERS["stream_frame_words"]["default"], doc = "streaming only, opt-in: carry the stream in frames of this many words so a lost 32 B block misassembles at most 2x as many 64 B words (both ends must agree; the public kernel does not); 0: the public wire format"),
        "tx_fifo_size": attrs.int(default = PARAMETERS["tx_fifo_size"]["default"], doc = "bytes, a power of two"),
        "use_framing": attrs.bool(default = PARAMETERS["use_framing"]["default"]),
        "xon_on_empty": attrs.bool(default = PARAMETERS["xon_on_empty"]["default"], doc = "XON at every fall to prog_empty (the public kernel); False: only after an XOFF"),
        "_aurora_flow": attrs.default_only(attrs.toolchain_dep(
            default = "toolchains//:aurora_flow",
            providers = [AuroraFlowToolchainInfo],
        )),
        "_fpga": attrs.default_only(attrs.toolchain_dep(
            default = "toolchains//:fpga",
            providers = [FpgaToolchainInfo],
        )),
        "_verilator": HDL_TOOLCHAIN_ATTRS["_verilator"],
    },
    doc = "One AuroraFlow link kernel (one QSFP port). Illegal parameters, and an RX FIFO " +
          "whose headroom cannot hold the link's in-flight data for `cable_m`, fail analysis " +
          "naming the target and the parameter.",
)
