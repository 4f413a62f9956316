"""The one FPGA toolchain: which tools stand behind every FPGA step. `kind` comes from
`[fpga] toolchain` (read once, in toolchains/BUCK); every FPGA rule asks this provider and
never reads the config itself. The graph has the same shape for both kinds.

```text
  sim    open-source tools that run anywhere: g++ (HLS C simulation libraries) with AMD's
         HLS arbitrary-precision headers (ap_int.h, ap_fixed.h, ...; Apache-2.0) that
         `./forge` unpacks from the pinned hls4ml wheel into `hls_types` (.venv/hls-types,
         tools/bootstrap/hls_types.sh), plus the project's own stream/ABI headers; the
         Verilator, FINN and Rust helper toolchains have their own providers.
  vitis  AMD's v++, vivado, vitis_hls and xclbinutil from a local install, named by
         `[vitis] root` (the XILINX_VITIS directory) and `[vivado] root`. With no install
         configured, analysis fails naming the missing tool, before any action runs.
```
"""

load(":fpga_platforms.bzl", "FPGA_PLATFORMS")
load(":system.bzl", "probe_tool_version")

FpgaToolchainInfo = provider(
    doc = "The FPGA tools. `kind`: \"sim\" or \"vitis\"; `platform`: str, the platform " +
          "name given to v++ --platform; `platform_desc`: Artifact, the platform's TOML " +
          "(memories, SLRs, QSFP interfaces, resources; toolchains/fpga_platforms/); " +
          "`part`: str (the default platform's, from its file); `platforms`: dict name -> " +
          "struct(name, desc, part, board_id), every platform file of " +
          "toolchains/fpga_platforms/ (a target selects one with `fpga_platform`); `tools`: dict name -> command (sim: cxx; vitis: vpp, vivado, " +
          "vitis_hls, xclbinutil); `version`: Artifact, every tool's probed version (an " +
          "input of every FPGA action); `hls_headers`: list[Artifact], the project's own " +
          "C-simulation headers (streams, ABI) whose directory sim puts first on every HLS " +
          "compile's include path; `hls_vendor_headers`: Artifact or None, sim: AMD's " +
          "arbitrary-precision headers copied from the bootstrap's tree (a directory, on the " +
          "include path after the project's, as -isystem).",
    fields = {
        "kind": provider_field(str),
        "hls_headers": provider_field(list),
        "hls_vendor_headers": provider_field(Artifact | None, default = None),
        "part": provider_field(str),
        "platform": provider_field(str),
        "platform_desc": provider_field(Artifact),
        "platforms": provider_field(dict),
        "tools": provider_field(dict),
        "version": provider_field(Artifact),
    },
)

_REGENERATE = "`fpga-platform starlark toolchains/fpga_platforms --out rules/toolchains/fpga_platforms.bzl` (rules/tools/fpga_platform)"

def fpga_platform(fpga, label, name: str):
    """The platform `name` of the toolchain (struct name, desc, part, board_id); "" is the
    toolchain's default. An unknown name fails analysis naming the target and the boards."""
    if not name:
        name = fpga.platform
    if name not in fpga.platforms:
        fail("{}: platform `{}` is not known; the boards are {} (one file each in toolchains/fpga_platforms/; a new board is a new file there)".format(label, name, ", ".join(sorted(fpga.platforms))))
    return fpga.platforms[name]

_VITIS_TOOLS = {
    # name -> (install root config key, path below it, version arguments)
    "vitis_hls": ("vitis", "bin/vitis_hls", ["-version"]),
    "vivado": ("vivado", "bin/vivado", ["-version"]),
    "vpp": ("vitis", "bin/v++", ["--version"]),
    "xclbinutil": ("vitis", "bin/xclbinutil", ["--version"]),
}

def _vitis_tools(ctx: AnalysisContext) -> dict:
    roots = {"vitis": ctx.attrs.vitis_root, "vivado": ctx.attrs.vivado_root}
    tools = {}
    missing = []
    for name, (root_key, rel, _args) in sorted(_VITIS_TOOLS.items()):
        root = roots[root_key]
        if root:
            tools[name] = root + "/" + rel
        else:
            missing.append("`{}` (needs `[{}] root`, the XILINX_{} directory)".format(
                rel.split("/")[-1],
                root_key,
                root_key.upper(),
            ))
    if missing:
        fail(("{}: fpga.toolchain=vitis needs AMD's tools, and no install is configured for " +
              "{}. Set the roots in .buckconfig.local (e.g. `[vitis] root = " +
              "/opt/Xilinx/Vitis/2023.2`, `[vivado] root = /opt/Xilinx/Vivado/2023.2`), or " +
              "build with the default `-c fpga.toolchain=sim`.").format(ctx.label, ", ".join(missing)))
    return tools

def _fpga_toolchain_impl(ctx: AnalysisContext) -> list[Provider]:
    if ctx.attrs.kind == "vitis":
        tools = _vitis_tools(ctx)
        commands = [[tools[n]] + _VITIS_TOOLS[n][2] for n in sorted(tools)]
    else:
        tools = {"cxx": ctx.attrs.cxx}
        commands = [[ctx.attrs.cxx, "--version"]]
    files, inputs = [], []
    if ctx.attrs.kind == "sim" and ctx.attrs.hls_types:
        # The bootstrap's stamp (wheel name and sha256, every header's sha256) is part of the
        # version; the spec it came from re-keys the probe when the pin changes.
        files = [ctx.attrs.hls_types + "/.forge-stamp"]
        inputs = ctx.attrs.hls_types_spec[DefaultInfo].default_outputs if ctx.attrs.hls_types_spec else []
    version = probe_tool_version(ctx, ctx.attrs._probe, commands, files = files, inputs = inputs)
    vendor = None
    if files:
        # An artifact of its own, so every compile declares the headers it reads (their
        # content is in its key, and it can run where there is no .venv).
        vendor = ctx.actions.declare_output("hls_types", dir = True)
        ctx.actions.run(
            cmd_args(
                ctx.attrs._probe[RunInfo],
                "copy-tree",
                ctx.attrs.hls_types + "/include",
                vendor.as_output(),
                hidden = [version],
            ),
            category = "hls_vendor_headers",
            local_only = True,
        )
    platforms = {}
    for name, desc in ctx.attrs.platform_descs.items():
        if name not in FPGA_PLATFORMS:
            fail("{}: platform file {} is not in rules/toolchains/fpga_platforms.bzl; regenerate it: {}".format(ctx.label, desc, _REGENERATE))
        facts = FPGA_PLATFORMS[name]
        platforms[name] = struct(name = name, desc = desc, part = facts["part"], board_id = facts["board_id"])
    for name in FPGA_PLATFORMS:
        if name not in platforms:
            fail("{}: rules/toolchains/fpga_platforms.bzl names platform {} but no file is given; regenerate it: {}".format(ctx.label, name, _REGENERATE))
    if ctx.attrs.platform not in platforms:
        fail("{}: default platform {} has no file in toolchains/fpga_platforms/ (known: {})".format(ctx.label, ctx.attrs.platform, ", ".join(sorted(platforms))))
    return [
        DefaultInfo(default_output = version),
        FpgaToolchainInfo(
            hls_headers = ctx.attrs.hls_headers[DefaultInfo].default_outputs,
            hls_vendor_headers = vendor,
            kind = ctx.attrs.kind,
            part = platforms[ctx.attrs.platform].part,
            platform = ctx.attrs.platform,
            platform_desc = platforms[ctx.attrs.platform].desc,
            platforms = platforms,
            tools = tools,
            version = version,
        ),
    ]

fpga_toolchain = rule(
    impl = _fpga_toolchain_impl,
    attrs = {
        "cxx": attrs.string(default = "g++", doc = "sim: the C++ compiler of HLS C simulation"),
        "hls_headers": attrs.dep(doc = "sim: the project's own C-simulation headers (its default outputs)"),
        "hls_types": attrs.string(
            default = "",
            doc = "sim: project-relative directory where `./forge` unpacked AMD's HLS " +
                  "arbitrary-precision headers (`include/`, `.forge-stamp`); \"\": none",
        ),
        "hls_types_spec": attrs.option(
            attrs.dep(),
            default = None,
            doc = "sim: the bootstrap spec `hls_types` comes from (its files re-key the probe)",
        ),
        "kind": attrs.enum(["sim", "vitis"], default = "sim"),
        "platform": attrs.string(doc = "the default platform: a target that names none is built for it"),
        "platform_descs": attrs.dict(
            attrs.string(),
            attrs.source(),
            doc = "platform name -> its TOML (toolchains/fpga_platforms/<name>.toml), every board a target may select",
        ),
        "vitis_root": attrs.string(default = "", doc = "vitis: XILINX_VITIS"),
        "vivado_root": attrs.string(default = "", doc = "vitis: XILINX_VIVADO"),
        "_probe": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//rules/tools/action:action",
        )),
    },
    is_toolchain_rule = True,
    doc = "The FPGA tools behind every FPGA rule: `sim` (open source) or `vitis` (AMD).",
)
