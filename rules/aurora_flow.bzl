"""The AuroraFlow link kernel as a build target: parameters checked at analysis, then either
the Vivado flow (toolchains//:fpga kind `vitis`: Aurora IP generation + package_xo, one
local-only, cache-uploadable action) or the open-source flow (`sim`: a Verilator model of
the kernel with the behavioural Aurora core). Both give the same KernelInfo and kernel.json,
which the link and deployment steps read (kernel name, ports with widths, parameters).

Actions: `aurora_flow_render` (`params.json`), then `verilator_kernel_model` (`model/`, sim)
or `vivado_package_xo` (`<name>.xo`, vitis), and `kernel.json` (params include `cable_m`,
`rx_headroom_words`, `rx_headroom_beats`, `inflight_need_beats`). Sub-targets
`[description]`, `[package]`, `[params]`. The FPGA tools come from `toolchains//:fpga`
(`FpgaToolchainInfo.kind` picks sim or vitis), python from `toolchains//:python`. Parameters:
[docs/auroraflow.md](auroraflow.md).
"""

load("//rules/toolchains:fpga.bzl", "FpgaToolchainInfo")
load("//rules/toolchains:python.bzl", "PythonToolchainInfo")
load(":aurora_flow_desc.bzl", "AXILITE", "FLOW_CONTROL")
load(":kernel.bzl", "KernelInfo", "kernel_description")
load(":verilator.bzl", "HDL_TOOLCHAIN_ATTRS", "include_dirs", "verilator_model")

_EQ_MODES = {"AUTO": 0, "DFE": 2, "LPM": 1}

def _is_pow2(n: int) -> bool:
    return n > 0 and (n & (n - 1)) == 0

def _check(ctx: AnalysisContext) -> dict:
    """Validates the parameters; returns them with the derived thresholds filled in."""
    a = ctx.attrs

    def bad(param, msg):
        fail("{}: parameter {}: {}".format(ctx.label, param, msg))

    if a.fifo_width not in (32, 64):
        bad("fifo_width", "{} bytes is not supported; use 32 or 64".format(a.fifo_width))
    for name, size in (("rx_fifo_size", a.rx_fifo_size), ("tx_fifo_size", a.tx_fifo_size)):
        if not _is_pow2(size):
            bad(name, "{} bytes is not a power of two".format(size))
        depth = size // a.fifo_width
        if depth < 16 or depth > 16384:
            bad(name, "{} bytes = {} words of {} B; the FIFO depth must be 16..16384 words".format(
                size,
                depth,
                a.fifo_width,
            ))
    depth = a.rx_fifo_size // a.fifo_width
    full = a.rx_fifo_prog_full if a.rx_fifo_prog_full > 0 else depth // 2
    empty = a.rx_fifo_prog_empty if a.rx_fifo_prog_empty > 0 else depth // 8
    if full >= depth:
        bad("rx_fifo_prog_full", "{} must be below the RX FIFO depth {} words".format(full, depth))
    if empty >= full:
        bad("rx_fifo_prog_empty", "{} must be below rx_fifo_prog_full ({})".format(empty, full))
    if a.instance not in (0, 1):
        bad("instance", "{}: an Alveo U280 has QSFP ports 0 and 1".format(a.instance))
    if a.rx_eq_mode not in _EQ_MODES:
        bad("rx_eq_mode", "'{}' is not one of AUTO, LPM, DFE".format(a.rx_eq_mode))
    if a.ins_loss_nyq < 0 or a.ins_loss_nyq > 31:
        bad("ins_loss_nyq", "{} dB is outside 0..31".format(a.ins_loss_nyq))
    cable_m = a.cable_m if a.cable_m >= 0 else FLOW_CONTROL["default_cable_m"]
    if cable_m > 2000:
        bad("cable_m", "{} m is outside 0..2000".format(cable_m))

    # in-flight budget (kernel.toml [flow_control]): what still arrives after an XOFF must fit
    # above prog_full, or a stalled receiver loses data
    headroom_words = depth - full
    headroom_beats = headroom_words * a.fifo_width // FLOW_CONTROL["link_beat_bytes"]
    need = FLOW_CONTROL["fixed_inflight_beats"] + FLOW_CONTROL["beats_per_metre"] * cable_m
    if headroom_beats < need:
        bad("rx_fifo_prog_full", ("headroom {} words = {} link beats (depth {} - prog_full {}) " +
                                  "is below the {} beats in flight with cable_m = {} ({} + {} x {} m); " +
                                  "raise rx_fifo_size or lower rx_fifo_prog_full").format(
            headroom_words,
            headroom_beats,
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
        "part": a.part,
        "rx_eq_mode": a.rx_eq_mode,
        "rx_fifo_prog_empty": empty,
        "rx_fifo_prog_full": full,
        "rx_fifo_size": a.rx_fifo_size,
        "rx_headroom_beats": headroom_beats,
        "rx_headroom_words": headroom_words,
        "sim_ip_reset_cycles": a.sim_ip_reset_cycles,
        "tx_fifo_size": a.tx_fifo_size,
        "use_framing": 1 if a.use_framing else 0,
        "xon_on_empty": 1 if a.xon_on_empty else 0,
    }

def _ports(p: dict) -> list:
    framing = p["use_framing"] == 1
    return [
        {"dir": "in", "kind": "clock", "name": "ap_clk", "width": 1},
        {"dir": "in", "kind": "reset", "name": "ap_rst_n", "width": 1},
        {"dir": "in", "kind": "clock", "name": "init_clk", "width": 1, "freq_mhz": "100"},
        {"dir": "in", "kind": "axis", "name": "tx_axis", "width": 8 * p["fifo_width"], "tlast": framing, "tkeep": framing},
        {"dir": "out", "kind": "axis", "name": "rx_axis", "width": 8 * p["fifo_width"], "tlast": framing, "tkeep": framing},
        {"addr_width": AXILITE["addr_width"], "dir": "in", "kind": "axilite", "name": AXILITE["name"], "range": AXILITE["range"], "width": AXILITE["width"]},
        {"dir": "in", "freq_mhz": "161.1328125", "kind": "diff_clock", "name": "gt_refclk_{}".format(p["instance"]), "width": 1},
        {"dir": "inout", "kind": "gt", "lanes": 4, "name": "gt_port", "width": 4},
    ]

def _aurora_flow_kernel_impl(ctx: AnalysisContext) -> list[Provider]:
    params = _check(ctx)
    name = params["kernel_name"]
    fpga = ctx.attrs._fpga[FpgaToolchainInfo]
    py = ctx.attrs._python[PythonToolchainInfo]
    json_params = dict(params)
    json_params["rtl_files"] = ctx.attrs.rtl + ctx.attrs.rtl_headers
    params_file = ctx.actions.declare_output("params.json")

    # with_inputs: the JSON names the RTL files, so their content must key the actions too
    params_json = ctx.actions.write_json(params_file, json_params, with_inputs = True, pretty = True)

    # the per-instance top, XDC, kernel.xml and Vivado parameter script
    package = ctx.actions.declare_output("package", dir = True)
    ctx.actions.run(
        cmd_args(py.interpreter, ctx.attrs.render, params_json, package.as_output(), hidden = [py.version]),
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
                py.interpreter,
                fpga.tools["vivado"],
                params_json,
                xo.as_output(),
                kernel_xml.as_output(),
                hidden = ctx.attrs.packaging + [ctx.attrs.render, fpga.version, py.version],
            ),
            category = "vivado_package_xo",
            # Vivado needs a licence and an install: here or on a worker offering
            # fpga-tools=vitis (docs/guide.md, "Remote execution"); shared through the cache.
            allow_cache_upload = True,
        )
        main = xo
    else:
        gparams = [
            "-GUSE_FRAMING={}".format(params["use_framing"]),
            "-GFIFO_WIDTH={}".format(params["fifo_width"]),
            "-GRX_FIFO_SIZE={}".format(params["rx_fifo_size"]),
            "-GRX_FIFO_PROG_FULL={}".format(params["rx_fifo_prog_full"]),
            "-GRX_FIFO_PROG_EMPTY={}".format(params["rx_fifo_prog_empty"]),
            "-GTX_FIFO_SIZE={}".format(params["tx_fifo_size"]),
            "-GINS_LOSS_NYQ={}".format(params["ins_loss_nyq"]),
            "-GRX_EQ_MODE={}".format(_EQ_MODES[params["rx_eq_mode"]]),
            "-GDRAIN_AXI_ON_RESET={}".format(params["drain_axi_on_reset"]),
            "-GIP_RESET_CYCLES={}".format(ctx.attrs.sim_ip_reset_cycles),
            "-GCABLE_M={}".format(params["cable_m"]),
            "-GXON_ON_EMPTY={}".format(params["xon_on_empty"]),
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
        "cable_m": attrs.int(default = -1, doc = "fibre metres of the link (cable + switch), sizes the RX headroom; -1: kernel.toml [flow_control] default_cable_m"),
        "drain_axi_on_reset": attrs.bool(default = False),
        "fifo_width": attrs.int(default = 64, doc = "user stream width in bytes: 32 or 64"),
        "ins_loss_nyq": attrs.int(default = 8),
        "instance": attrs.int(doc = "QSFP port 0 or 1"),
        "kernel_name": attrs.string(default = "", doc = "kernel and CU name; default: the target name"),
        "packaging": attrs.list(attrs.source(), default = [], doc = "Tcl scripts build_xo uses"),
        "part": attrs.string(default = "xcu280-fsvh2892-2L-e"),
        "render": attrs.source(doc = "tcl/render_kernel.py"),
        "rtl": attrs.list(attrs.source()),
        "rtl_headers": attrs.list(attrs.source(), default = [], doc = "files the RTL `include`s; their directories become -I"),
        "rx_eq_mode": attrs.string(default = "LPM"),
        "rx_fifo_prog_empty": attrs.int(default = 0, doc = "words; 0 = depth / 8"),
        "rx_fifo_prog_full": attrs.int(default = 0, doc = "words; 0 = depth / 2"),
        "rx_fifo_size": attrs.int(default = 65536, doc = "bytes, a power of two"),
        "sim_ip_reset_cycles": attrs.int(default = 300, doc = "init_clk cycles of core reset in the simulation model"),
        "sim_srcs": attrs.list(attrs.source(), default = [], doc = "behavioural Aurora core (sim)"),
        "tx_fifo_size": attrs.int(default = 8192, doc = "bytes, a power of two"),
        "use_framing": attrs.bool(default = False),
        "xon_on_empty": attrs.bool(default = True, doc = "XON at every fall to prog_empty (the public kernel); False: only after an XOFF"),
        "_fpga": attrs.default_only(attrs.toolchain_dep(
            default = "toolchains//:fpga",
            providers = [FpgaToolchainInfo],
        )),
        "_python": HDL_TOOLCHAIN_ATTRS["_python"],
        "_verilator": HDL_TOOLCHAIN_ATTRS["_verilator"],
    },
    doc = "One AuroraFlow link kernel (one QSFP port). Illegal parameters, and an RX FIFO " +
          "whose headroom cannot hold the link's in-flight data for `cable_m`, fail analysis " +
          "naming the target and the parameter.",
)
