"""HLS kernels in the build graph. One C++ source in the Vitis HLS style (INTERFACE pragmas in
place) becomes a kernel of the link step:

```text
  vitis  `v++ -c -t hw --platform P -k TOP -o BOARD_ID/NAME.xo SRC` (HLS inside v++) for every
         board P the kernel is for (`platforms`; default every file of
         toolchains/fpga_platforms/), one local-only, cache-uploadable action each, built only
         when a link on that board takes it; Vitis's own ap_int.h / hls_stream.h are used.
  sim    the SAME source compiled by the toolchain's C++ compiler against AMD's HLS
         arbitrary-precision headers (ap_int.h, ap_fixed.h, ...; the toolchain's
         hls_vendor_headers, -isystem) and hw/hls/include (this project's hls_stream.h,
         ap_axi_sdata.h; -I, searched first) together with a generated shim that exports
         the C ABI of hw/hls/include/af_sim_abi.h, into lib<NAME>.so for the simulated
         device runtime.
```

Both give the same KernelInfo. Its ports are derived here from the target's `ports` (one
entry per argument of the top function); the sim library derives its own port list from
the compiled C++ types, and //hw/hls:ports_match checks the two agree.

`hls_kernel` under `sim` runs `hls_csim_library`: `tools["cxx"] -std=c++17 -O2 -fPIC -shared`
of the same source (`-include src`) plus a generated shim (`[shim]` sub-target) against
`hw/hls/include` and AMD's headers, into `lib<name>.so` exporting the C ABI of `hw/hls/include/af_sim_abi.h`;
under `vitis` it runs `vpp_compile` per board (`v++ -c -t hw --platform <platform> -k <top> -o
<board_id>/<name>.xo <src>`, local-only, cache-uploadable; sub-target `[xo_<board_id>]`), and
the link takes its own board's (`KernelInfo.xos`; a board outside `platforms` is refused there). The toolchain's `version` is an input of
both. Bad `ports` fail analysis naming the target, the entry and the fix; a kind that does
not match the C++ parameter type, or a missing argument, fails the sim compile. The
kernel's `KernelInfo` has `kind = "hls"`, `params = {top, defines, args}` and
`description` (the `kernel.json` of `kernel_description`). `hls_cxx_test` builds its program
with action `hls_test_binary` and runs it as `prog [VECTORS] args... NAME=<lib.so>=<kernel.json>...`;
a `generator` writes VECTORS in action `hls_test_vectors` (sim toolchain only).
"""

load("//rules/toolchains:fpga.bzl", "FpgaToolchainInfo", "fpga_platform")
load("//rules/toolchains:python.bzl", "PythonToolchainInfo")
load(":kernel.bzl", "KernelInfo", "kernel_description")

# argument kind (as in `#pragma HLS INTERFACE <mode>`) -> (ABI kind, af_arg_kind constant)
_ARG_KINDS = {
    "axis": ("stream", "AF_ARG_STREAM"),
    "m_axi": ("memory", "AF_ARG_MEMORY"),
    "s_axilite": ("scalar", "AF_ARG_SCALAR"),
}

# First argument register of an HLS s_axilite control interface; after ap_ctrl (0x00), GIE
# (0x04), IER (0x08) and ISR (0x0c), as in the register maps of Vitis HLS's generated
# drivers (e.g. yxd97/check_vitis ubmark_hbm_vivado/HLS_ip/hbm_kernel/drivers/.../
# xhbm_kernel_hw.h, Vitis HLS 2022.1): each argument takes its data words plus one
# reserved word.
_FIRST_ARG_OFFSET = 0x10

def _is_identifier(s: str) -> bool:
    if not s or s[0].isdigit():
        return False
    for c in s.elems():
        if not (c.isalnum() or c == "_"):
            return False
    return True

def _check_args(ctx: AnalysisContext) -> list:
    """The `ports` attribute, validated: one dict per C++ argument, in signature order."""
    args = []
    seen = {}
    if not ctx.attrs.ports:
        fail("{}: `ports` is empty; list every argument of `{}` in signature order".format(ctx.label, ctx.attrs.top))
    for i, p in enumerate(ctx.attrs.ports):
        def bad(msg):
            fail("{}: ports[{}] ({}): {}".format(ctx.label, i, p.get("name", "?"), msg))

        for key in p:
            if key not in ("bundle", "dir", "kind", "name", "width"):
                bad("unknown key `{}` (use name, kind, width, dir, bundle)".format(key))
        name = p.get("name", "")
        if not _is_identifier(name):
            bad("`name` must be the C++ argument name")
        if name in seen:
            bad("argument name used twice")
        seen[name] = True
        kind = p.get("kind", "")
        if kind not in _ARG_KINDS:
            bad("kind `{}` is not one of m_axi, axis, s_axilite".format(kind))
        width = p.get("width", 0)
        if type(width) != "int" or width < 1:
            bad("`width` (bits) must be a positive integer")
        arg = {"kind": kind, "name": name, "width": width}
        if kind == "axis":
            d = p.get("dir", "")
            if d not in ("in", "out"):
                bad("an axis argument needs dir = \"in\" (the kernel reads) or \"out\"")
            arg["dir"] = d
        elif "dir" in p:
            bad("`dir` is only for axis arguments")
        if kind == "m_axi":
            bundle = p.get("bundle", "gmem")
            if not _is_identifier(bundle):
                bad("`bundle` must be an identifier")
            arg["bundle"] = bundle
        elif "bundle" in p:
            bad("`bundle` is only for m_axi arguments (scalars are in bundle control)")
        if kind == "s_axilite" and width > 64:
            bad("s_axilite scalars are at most 64 bits")
        args.append(arg)
    return args

def _interface(ctx: AnalysisContext, args: list) -> (list, list):
    """(KernelInfo ports, argument list with register offsets) from the checked arguments.
    The port order is the one af_kernel_shim.h produces: clock, reset, one m_axi port per
    bundle (in first-use order), s_axi_control, one axis port per stream argument."""
    ports = [
        {"dir": "in", "kind": "clock", "name": "ap_clk", "width": 1},
        {"dir": "in", "kind": "reset", "name": "ap_rst_n", "width": 1},
    ]
    bundle_width = {}
    for a in args:
        if a["kind"] != "m_axi":
            continue
        b = a["bundle"]
        if b in bundle_width:
            if bundle_width[b] != a["width"]:
                fail("{}: m_axi bundle `{}` has arguments of {} and {} bits; give each width its own bundle".format(
                    ctx.label,
                    b,
                    bundle_width[b],
                    a["width"],
                ))
            continue
        bundle_width[b] = a["width"]
        ports.append({"bundle": b, "dir": "inout", "kind": "m_axi", "name": "m_axi_" + b, "width": a["width"]})
    registers = [a for a in args if a["kind"] != "axis"]
    if registers or ctx.attrs.control != "ap_ctrl_none":
        ports.append({"bundle": "control", "dir": "in", "kind": "axilite", "name": "s_axi_control", "width": 32})
    for a in args:
        if a["kind"] == "axis":
            # TDATA in whole bytes (AXI4-Stream); ap_axiu elements carry TLAST and TKEEP
            ports.append({
                "dir": a["dir"],
                "kind": "axis",
                "name": a["name"],
                "tkeep": ctx.attrs.axis_sideband,
                "tlast": ctx.attrs.axis_sideband,
                "width": 8 * ((a["width"] + 7) // 8),
            })

    described = []
    offset = _FIRST_ARG_OFFSET
    for index, a in enumerate(args):
        abi_kind = _ARG_KINDS[a["kind"]][0]
        d = {"index": index, "kind": abi_kind, "name": a["name"], "width": a["width"]}
        if a["kind"] == "axis":
            d["port"] = a["name"]
        else:
            size = 8 if (a["kind"] == "m_axi" or a["width"] > 32) else 4
            d["offset"] = offset
            d["size"] = size
            d["port"] = "m_axi_" + a["bundle"] if a["kind"] == "m_axi" else "s_axi_control"
            offset += size + 4
        described.append(d)
    return ports, described

def _shim_source(ctx: AnalysisContext, args: list) -> str:
    lines = [
        "// Generated by hls_kernel for {}: exports `{}` through af_sim_abi.h.".format(ctx.label, ctx.attrs.top),
        "#include \"af_kernel_shim.h\"",
        "AF_KERNEL_EXPORT({}, \"{}\",".format(ctx.attrs.top, ctx.attrs.control),
    ]
    for i, a in enumerate(args):
        if a["kind"] == "axis":
            d, bundle = a["dir"], ""
        elif a["kind"] == "m_axi":
            d, bundle = "inout", a["bundle"]
        else:
            d, bundle = "in", "control"
        lines.append("    {{\"{}\", {}, \"{}\", \"{}\"}}{}".format(
            a["name"],
            _ARG_KINDS[a["kind"]][1],
            d,
            bundle,
            "," if i + 1 < len(args) else ")",
        ))
    return "\n".join(lines) + "\n"

def _define_flags(defines: dict) -> list:
    return ["-D{}={}".format(k, v) for k, v in sorted(defines.items())]

def _include_flags(ctx: AnalysisContext, with_project_headers: bool) -> cmd_args:
    flags = cmd_args(ctx.attrs.src, parent = 1, format = "-I{}")
    dirs = cmd_args([cmd_args(h, parent = 1, format = "-I{}") for h in ctx.attrs.hdrs])
    if with_project_headers:
        return cmd_args(flags, dirs, _sim_header_flags(ctx, ctx.attrs._fpga[FpgaToolchainInfo]))
    return cmd_args(flags, dirs)

def _sim_header_flags(ctx: AnalysisContext, tc) -> cmd_args:
    """The C-simulation header path: the project's own headers (one directory) with -I, then
    AMD's arbitrary-precision headers with -isystem, which g++ searches after every -I
    directory: the project's hls_stream.h (blocking streams bound to the simulated card)
    shadows the vendor's, and ap_int.h, ap_fixed.h, ... come from the vendor (the project has
    none). -isystem also keeps the vendor headers' own warnings out of -Wall. The vendor copy
    lives under buck-out/<isolation dir>/, and its assertions name their file (`__FILE__`):
    -ffile-prefix-map writes it as `hls_types/...`, so a library does not depend on where
    the engine keeps its outputs (forge and buck2 build the same bytes)."""
    if tc.hls_vendor_headers == None:
        fail("{}: the `{}` FPGA toolchain has no HLS arbitrary-precision headers (hls_types in toolchains/BUCK; `./forge` unpacks them into .venv/hls-types)".format(ctx.label, tc.kind))
    return cmd_args(
        cmd_args(tc.hls_headers[0], parent = 1, format = "-I{}"),
        cmd_args(tc.hls_vendor_headers, format = "-isystem{}"),
        cmd_args(tc.hls_vendor_headers, format = "-ffile-prefix-map={}=hls_types"),
    )

def _boards(ctx: AnalysisContext, tc) -> list:
    """The boards the kernel is built for: its `platforms`, each checked against the platform
    files; none listed: every board of toolchains/fpga_platforms/."""
    names = ctx.attrs.platforms or sorted(tc.platforms)
    return [fpga_platform(tc, ctx.label, n) for n in names]

def _vpp_compile(ctx: AnalysisContext, tc, plat) -> Artifact:
    """`v++ -c -t hw --platform <plat> -k <top> -o <board_id>/<name>.xo <src>`: the .xo of one
    board (the file keeps the kernel's name, which `deploy-tool vpp-link` matches)."""
    name = ctx.label.name
    xo = ctx.actions.declare_output("{}/{}.xo".format(plat.board_id, name))
    work = ctx.actions.declare_output("vpp_work_" + plat.board_id, dir = True)
    ctx.actions.run(
        cmd_args(
            tc.tools["vpp"],
            "-c",
            "-t",
            "hw",
            "--platform",
            plat.name,
            "-k",
            ctx.attrs.top,
            # Vitis's own HLS headers: this project's set is for C simulation only
            _include_flags(ctx, False),
            _define_flags(ctx.attrs.defines),
            cmd_args(work.as_output(), format = "--temp_dir={}/tmp"),
            cmd_args(work.as_output(), format = "--log_dir={}/log"),
            cmd_args(work.as_output(), format = "--report_dir={}/report"),
            "-o",
            xo.as_output(),
            ctx.attrs.src,
            hidden = [tc.version] + ctx.attrs.hdrs,
        ),
        category = "vpp_compile",
        identifier = plat.board_id,
        # v++ needs a licence and an install: here or on a worker offering fpga-tools=vitis
        # (docs/guide.md, "Remote execution"); its .xo is shared through the cache.
        allow_cache_upload = True,
    )
    return xo

def _hls_kernel_impl(ctx: AnalysisContext) -> list[Provider]:
    tc = ctx.attrs._fpga[FpgaToolchainInfo]
    args = _check_args(ctx)
    ports, described = _interface(ctx, args)
    name = ctx.label.name
    project_headers = ctx.attrs._fpga[FpgaToolchainInfo].hls_headers
    params = {
        "args": described,
        "defines": ctx.attrs.defines,
        "top": ctx.attrs.top,
    }

    shim = ctx.actions.write(name + "_shim.cpp", _shim_source(ctx, args))
    boards = _boards(ctx, tc)
    xos = {}
    xo = None
    model = None
    if tc.kind == "vitis":
        # One .xo per board: v++ -c compiles for a platform's part, and the link step takes
        # the one of its own board (rules/vitis_link.bzl). Actions are lazy: only the boards
        # a build links are compiled.
        for plat in boards:
            xos[plat.name] = _vpp_compile(ctx, tc, plat)
        xo = xos.get(tc.platform)
        main = xo or xos[boards[0].name]
    else:
        if "cxx" not in tc.tools:
            fail("{}: the `{}` FPGA toolchain has no C++ compiler (tools[\"cxx\"])".format(ctx.label, tc.kind))
        model = ctx.actions.declare_output("lib{}.so".format(name))
        ctx.actions.run(
            cmd_args(
                tc.tools["cxx"],
                "-std=c++17",
                "-O2",
                "-fPIC",
                "-shared",
                "-fvisibility=hidden",
                "-Wall",
                "-Wno-unknown-pragmas",
                "-Wno-unused-label",
                _include_flags(ctx, True),
                _define_flags(ctx.attrs.defines),
                # the unchanged kernel source first, then the generated exports
                "-include",
                ctx.attrs.src,
                shim,
                "-o",
                model.as_output(),
                hidden = [tc.version] + ctx.attrs.hdrs + project_headers + [tc.hls_vendor_headers],
            ),
            category = "hls_csim_library",
        )
        main = model

    # kernel.json names no .xo: a link reads the description, and naming one board's .xo
    # there would make every board's link build it
    info = {
        "control": ctx.attrs.control,
        "kind": "hls",
        "model": model,
        "name": name,
        "params": params,
        "ports": ports,
        "toolchain": tc.kind,
        "xo": None,
    }
    description = kernel_description(ctx, info)
    sub_targets = {
        "description": [DefaultInfo(default_output = description)],
        "shim": [DefaultInfo(default_output = shim)],
    }
    for plat in boards:
        if plat.name in xos:
            sub_targets["xo_" + plat.board_id] = [DefaultInfo(default_output = xos[plat.name])]
    return [
        DefaultInfo(default_output = main, sub_targets = sub_targets),
        KernelInfo(
            control = ctx.attrs.control,
            description = description,
            kind = "hls",
            model = model,
            name = name,
            params = params,
            platforms = [plat.name for plat in boards],
            ports = ports,
            toolchain = tc.kind,
            xo = xo,
            xos = xos,
        ),
    ]

hls_kernel = rule(
    impl = _hls_kernel_impl,
    attrs = {
        "axis_sideband": attrs.bool(
            default = True,
            doc = "axis arguments are ap_axiu<...> (TLAST and TKEEP); False: plain ap_uint streams",
        ),
        "control": attrs.enum(["ap_ctrl_chain", "ap_ctrl_hs", "ap_ctrl_none"], default = "ap_ctrl_chain"),
        "defines": attrs.dict(attrs.string(), attrs.string(), default = {}, doc = "-D macros for both toolchains"),
        "hdrs": attrs.list(attrs.source(), default = [], doc = "the kernel's own headers (their dirs become -I)"),
        "platforms": attrs.list(
            attrs.string(),
            default = [],
            doc = "the boards (files of toolchains/fpga_platforms/) the kernel is built for, one " +
                  ".xo each under vitis; a link on another board refuses it. []: every board",
        ),
        "ports": attrs.list(
            attrs.dict(attrs.string(), attrs.any()),
            doc = "one dict per argument of `top`, in signature order: name, kind (m_axi | axis | " +
                  "s_axilite), width (bits: m_axi element, axis TDATA, scalar), dir (axis: in | out), " +
                  "bundle (m_axi, default gmem)",
        ),
        "src": attrs.source(doc = "the kernel's C++ source (Vitis HLS style, pragmas in place)"),
        "top": attrs.string(doc = "the top function (extern \"C\")"),
        "_fpga": attrs.default_only(attrs.toolchain_dep(
            default = "toolchains//:fpga",
            providers = [FpgaToolchainInfo],
        )),
    },
    doc = "An HLS C++ kernel: `.xo` with the vitis FPGA toolchain, a C-simulation shared " +
          "library exporting af_sim_abi.h with sim. Returns KernelInfo (kind \"hls\").",
)

# ---- tests of HLS kernels' C simulation

def _sim_models(ctx: AnalysisContext) -> list:
    """`name=<lib.so>=<kernel.json>` for every kernel, for the test programs."""
    out = []
    for k in ctx.attrs.kernels:
        info = k[KernelInfo]
        if info.model == None:
            fail(("{}: kernel {} has no C-simulation library with the `{}` FPGA toolchain; HLS C " +
                  "simulation tests need -c fpga.toolchain=sim").format(ctx.label, info.name, info.toolchain))
        out.append(cmd_args(info.name, info.model, info.description, delimiter = "="))
    return out

def _hls_cxx_test_impl(ctx: AnalysisContext) -> list[Provider]:
    tc = ctx.attrs._fpga[FpgaToolchainInfo]
    if "cxx" not in tc.tools:
        fail("{}: HLS C-simulation tests need the sim FPGA toolchain (-c fpga.toolchain=sim)".format(ctx.label))
    binary = ctx.actions.declare_output(ctx.label.name)
    headers = ctx.attrs._fpga[FpgaToolchainInfo].hls_headers
    ctx.actions.run(
        cmd_args(
            tc.tools["cxx"],
            "-std=c++17",
            # unoptimised, as Vitis HLS compiles C simulation unless `csim.O=true` (UG1393
            # v2023.2, C-Simulation Configuration): ap_int_semantics compiles in 14 CPU-s
            # instead of 22 at -O1 and runs its 58,190 vectors in 2.4 s instead of 0.6
            "-O0",
            "-Wall",
            "-Wno-unknown-pragmas",
            "-Wno-unused-label",
            _sim_header_flags(ctx, tc),
            ctx.attrs.srcs,
            "-o",
            binary.as_output(),
            "-ldl",
            "-lpthread",
            hidden = [tc.version] + headers + ctx.attrs.hdrs,
        ),
        category = "hls_test_binary",
    )
    command = cmd_args(binary)
    if ctx.attrs.generator:
        py = ctx.attrs._python[PythonToolchainInfo]
        vectors = ctx.actions.declare_output("vectors.txt")
        ctx.actions.run(
            cmd_args(py.interpreter, ctx.attrs.generator, vectors.as_output(), ctx.attrs.generator_args, hidden = [py.version]),
            category = "hls_test_vectors",
            local_only = py.local_only,
        )
        command.add(vectors)
    command.add(ctx.attrs.args)
    command.add(_sim_models(ctx))
    return [
        DefaultInfo(default_output = binary),
        ExternalRunnerTestInfo(type = "hls", command = [command], labels = ctx.attrs.labels),
    ]

hls_cxx_test = rule(
    impl = _hls_cxx_test_impl,
    attrs = {
        "args": attrs.list(attrs.string(), default = []),
        "generator": attrs.option(attrs.source(), default = None, doc = "python script writing reference vectors"),
        "generator_args": attrs.list(attrs.string(), default = []),
        "hdrs": attrs.list(attrs.source(), default = [], doc = "headers the srcs include (by relative path)"),
        "kernels": attrs.list(attrs.dep(providers = [KernelInfo]), default = []),
        "labels": attrs.list(attrs.string(), default = []),
        "srcs": attrs.list(attrs.source()),
        "_fpga": attrs.default_only(attrs.toolchain_dep(
            default = "toolchains//:fpga",
            providers = [FpgaToolchainInfo],
        )),
        "_python": attrs.default_only(attrs.toolchain_dep(
            default = "toolchains//:python",
            providers = [PythonToolchainInfo],
        )),
    },
    doc = "A C++ test program built with the FPGA toolchain's compiler against hw/hls/include " +
          "and AMD's arbitrary-precision headers (the toolchain's hls_vendor_headers) " +
          "and run as `prog [VECTORS] args... NAME=<lib.so>=<kernel.json>...`: VECTORS is the " +
          "file `generator OUT generator_args...` wrote (python toolchain), one NAME=... per kernel.",
)

def _hls_python_test_impl(ctx: AnalysisContext) -> list[Provider]:
    py = ctx.attrs._python[PythonToolchainInfo]
    command = cmd_args(py.interpreter, ctx.attrs.test, ctx.attrs.args, _sim_models(ctx), hidden = [py.version])
    return [
        DefaultInfo(default_output = ctx.attrs.test),
        ExternalRunnerTestInfo(type = "hls", command = [command], labels = ctx.attrs.labels),
    ]

hls_python_test = rule(
    impl = _hls_python_test_impl,
    attrs = {
        "args": attrs.list(attrs.string(), default = []),
        "kernels": attrs.list(attrs.dep(providers = [KernelInfo])),
        "labels": attrs.list(attrs.string(), default = []),
        "test": attrs.source(),
        "_python": attrs.default_only(attrs.toolchain_dep(
            default = "toolchains//:python",
            providers = [PythonToolchainInfo],
        )),
    },
    doc = "A python test (python toolchain) run as `test args... NAME=<lib.so>=<kernel.json>...`.",
)
