"""The link step of ONE FPGA: its kernels and the deployment's connectivity become a
generated, validated v++ `--config`, then a bitstream. `vitis`: `v++ -l -t hw` (hours of
place & route: local-only, shared through the remote cache). `sim`: a real xclbin
container (XRT's axlf layout) whose sections carry the device's simulation description,
which the host's simulation backend loads.

Which kernels sit on the device, how its streams connect and which cable carries each
cut is decided by `deploy-tool link-config` from the deployment's TOML and the partition
plan, and validated there before any vendor tool runs.

Actions of `vitis_link`: with a partition, `plan_slice` (`deploy-tool plan-slice`: the
device's share of the plan, `<dev>.plan.json`, sub-target `[plan_slice]`) and `copy
finn_<dev>_exec` (the device's executor model out of `exec/`); then `link_config`
(`deploy-tool link-config` on the slice: the CUs, the validated v++ `--config` `<dev>.cfg` and
the simulated device description `<dev>.sim.json`); then under `sim` `xclbin_pack`
(`xclbin-pack`, a real axlf container), under `vitis` `vpp_link` (`deploy-tool vpp-link` runs
the toolchain's `v++ -l -t hw --platform … --config …` with the `.xo` of exactly the kernels
the config uses; local-only, cache-uploadable) and, for a FINN partition, `finn_partition_xo`
(the plan's folding applied with FINN's `ApplyConfig`, then FINN's IP steps and
`CreateVitisXO`) or, for a replica plan, `finn_replica_xo` (`finn/flow/replica_xo.py`: the
same steps for each whole copy's `finn_whole` and each segment's `finn_<first>__<last>` on
the device, cut out of the unpartitioned HW model; a directory of `<kernel>.xo`, sub-target
`[finn_xo]`, which `vpp-link --xo-dir` reads).
"""

load("//rules:finn.bzl", "PartitionPlanInfo", "finn_script")
load("//rules:kernel.bzl", "KernelInfo")
load("//rules/toolchains:aurora_flow.bzl", "AuroraFlowToolchainInfo")
load("//rules/toolchains:deploy.bzl", "DeployToolchainInfo")
load("//rules/toolchains:finn.bzl", "FinnToolchainInfo")
load("//rules/toolchains:fpga.bzl", "FpgaToolchainInfo", "fpga_platform")

DeploymentDescInfo = provider(
    doc = "A checked deployment description. `name`: str; `description`: Artifact, the " +
          "TOML; `devices`: list[str], device names in pipeline order; `checked`: Artifact, " +
          "written only when the description is valid (an input of every action that " +
          "reads it); `devices_json` / `topology_json`: Artifact, the partitioner's inputs.",
    fields = {
        "checked": provider_field(Artifact),
        "description": provider_field(Artifact),
        "devices": provider_field(list),
        "devices_json": provider_field(Artifact),
        "name": provider_field(str),
        "topology_json": provider_field(Artifact),
    },
)

BitstreamInfo = provider(
    doc = "One FPGA's bitstream. `device`: str; `xclbin`: Artifact; `link_config`: " +
          "Artifact, the v++ --config that produced it; `sim_description`: Artifact, the " +
          "simulated device description (JSON); `platform`: str; `toolchain`: \"sim\" | " +
          "\"vitis\".",
    fields = {
        "device": provider_field(str),
        "link_config": provider_field(Artifact),
        "platform": provider_field(str),
        "sim_description": provider_field(Artifact),
        "toolchain": provider_field(str),
        "xclbin": provider_field(Artifact),
    },
)

def _finn_xo_args(ctx: AnalysisContext, fpga) -> list:
    # The FINN IP steps' common arguments: the board's part, the clock, AMD's tools.
    return [
        "--part",
        fpga_platform(fpga, ctx.label, ctx.attrs.platform).part,
        "--clk-mhz",
        str(ctx.attrs.clock_mhz),
        "--vitis-hls",
        fpga.tools["vitis_hls"],
        "--vivado",
        fpga.tools["vivado"],
    ]

def _finn_xo_run(ctx: AnalysisContext, fpga, script: str, args: list, category: str):
    tc = ctx.attrs._finn[FinnToolchainInfo]
    ctx.actions.run(
        cmd_args(finn_script(tc, script, args + _finn_xo_args(ctx, fpga)), hidden = [fpga.version]),
        category = category,
        # FINN's environment is this machine's (the toolchain says so): it runs here,
        # and its result is shared through the remote cache.
        local_only = tc.local_only,
        allow_cache_upload = True,
    )

def _finn_kernel(ctx: AnalysisContext, fpga, plan_info, plan_slice, device: str):
    """The device's FINN partition as a kernel: (model, xos, xo_dir). The model is the
    partition's executor export (sim); under vitis FINN's IP steps make the .xo, with FINN's
    width converter first where the cut it receives is narrower or wider than its first
    layer (read from the device's plan slice): one `.xo` for a single-copy plan
    (`finn_partition_xo`), or, for a replica plan, a directory with one `<kernel>.xo` per
    distinct copy or segment on the device (`finn_replica_xo`; which ones the plan says, so
    it is known only when the action runs). Its ports come from the plan, which the link
    tool reads."""

    # Copies of this device's share of the partition step's directories: an action reading a
    # projection depends on the whole directory, so another device's change would re-run
    # it; the copy re-runs (in-process, cheap) and leaves the same bytes, and the link
    # config, xclbin and FINN IP steps downstream stay cached. A replica plan's copies are
    # whole networks (`whole/`) or segments of one (`segments/<first>__<last>/`): the link
    # tool picks each CU's model from the whole export.
    model = ctx.actions.copy_file("finn_{}_exec".format(device), plan_info.exec if ctx.attrs.replicas else plan_info.exec.project(device))
    if fpga.kind != "vitis":
        return model, [], None
    folding = ctx.actions.copy_file("finn_{}_folding.json".format(device), plan_info.folding.project(device + ".json"))
    if ctx.attrs.replicas:
        # Every copy shares one folding, so the device's folding config covers each kernel.
        xo_dir = ctx.actions.declare_output("finn_xo", dir = True)
        _finn_xo_run(ctx, fpga, "replica_xo.py", [
            "--model",
            plan_info.model,
            "--folding",
            folding,
            "--plan",
            plan_slice,
            "--device",
            device,
            "--out-dir",
            xo_dir.as_output(),
        ], "finn_replica_xo")
        return model, [], xo_dir
    part = ctx.actions.copy_file("finn_{}.onnx".format(device), plan_info.partitions.project(device + ".onnx"))
    xo = ctx.actions.declare_output("finn_{}.xo".format(device))
    _finn_xo_run(ctx, fpga, "partition_xo.py", [
        "--in",
        part,
        "--folding",
        folding,
        "--kernel",
        "finn_" + device,
        "--plan",
        plan_slice,
        "--device",
        device,
        "--out",
        xo.as_output(),
    ], "finn_partition_xo")
    return model, [xo], None

def _vitis_link_impl(ctx: AnalysisContext) -> list[Provider]:
    fpga = ctx.attrs._fpga[FpgaToolchainInfo]
    plat = fpga_platform(fpga, ctx.label, ctx.attrs.platform)
    desc = ctx.attrs.deployment[DeploymentDescInfo]
    device = ctx.attrs.device
    if device not in desc.devices:
        fail("{}: device `{}` is not one of the deployment's devices {}".format(ctx.label, device, desc.devices))
    kernels = [k[KernelInfo] for k in ctx.attrs.kernels]
    for k in kernels:
        if k.toolchain != fpga.kind:
            fail("{}: kernel `{}` was built for `{}` but the link uses `{}`".format(ctx.label, k.name, k.toolchain, fpga.kind))

        # One board per link: a kernel packaged for another board's part is refused here.
        if k.params.get("part", plat.part) != plat.part:
            fail("{}: kernel `{}` is packaged for part {}, but this link's board {} is {}; list the kernels packaged for it (e.g. //hw/aurora_flow:aurora_flow_<port>_{})".format(ctx.label, k.name, k.params["part"], plat.name, plat.part, plat.board_id))
        if k.platforms != None and plat.name not in k.platforms:
            fail("{}: kernel `{}` is built for {} only, not for this link's board {}; add it to the kernel's `platforms`".format(ctx.label, k.name, ", ".join(k.platforms), plat.name))
    descriptions = [k.description for k in kernels]

    # An HLS kernel's .xo for this board (one per board, `xos`); other kernels have one .xo.
    xos = [k.xos[plat.name] if k.xos else k.xo for k in kernels]
    xos = [xo for xo in xos if xo != None]

    plan = None
    finn_model = None
    finn_xo_dir = None
    if ctx.attrs.partition:
        plan_info = ctx.attrs.partition[PartitionPlanInfo]

        # The link step reads this device's slice of the plan only, so a change confined
        # to other devices' layers leaves its inputs byte-identical (and it cached).
        plan = ctx.actions.declare_output(device + ".plan.json")
        ctx.actions.run(
            cmd_args(
                ctx.attrs._deploy[DeployToolchainInfo].compiler,
                "plan-slice",
                "--plan",
                plan_info.plan,
                "--device",
                device,
                "--out",
                plan.as_output(),
            ),
            category = "plan_slice",
            identifier = device,
        )
        finn_model, finn_xos, finn_xo_dir = _finn_kernel(ctx, fpga, plan_info, plan, device)
        xos += finn_xos

    cfg = ctx.actions.declare_output(device + ".cfg")
    sim = ctx.actions.declare_output(device + ".sim.json")
    args = cmd_args(
        ctx.attrs._deploy[DeployToolchainInfo].compiler,
        "link-config",
        "--deployment",
        desc.description,
        "--platform",
        plat.desc,
        "--device",
        device,
        "--flow-control",
        ctx.attrs.flow_control or ctx.attrs._aurora_flow[AuroraFlowToolchainInfo].kernel_description,
        hidden = [desc.checked],
    )
    for d in descriptions:
        args.add("--kernel", d)
    if plan != None:
        args.add("--plan", plan)
        args.add("--finn-model", finn_model)
    args.add("--cfg-out", cfg.as_output(), "--sim-out", sim.as_output())
    ctx.actions.run(args, category = "link_config", identifier = device)

    xclbin = ctx.actions.declare_output(device + ".xclbin")
    if fpga.kind == "vitis":
        link = cmd_args(
            ctx.attrs._deploy[DeployToolchainInfo].compiler,
            "vpp-link",
            "--vpp",
            fpga.tools["vpp"],
            "--platform",
            plat.name,
            "--config",
            cfg,
            "--sim-description",
            sim,
            "--out",
            xclbin.as_output(),
            hidden = [fpga.version],
        )
        for xo in xos:
            link.add("--xo", xo)
        if finn_xo_dir != None:
            link.add("--xo-dir", finn_xo_dir)
        ctx.actions.run(
            link,
            category = "vpp_link",
            identifier = device,
            # Hours of place & route: with remote execution on, a worker offering
            # fpga-tools=vitis runs it (its Vitis install shown with --read-only, its licence
            # server reached with --share-network); the result is shared through the cache.
            allow_cache_upload = True,
        )
    else:
        # Every kernel model the description may reference is an input; the packer
        # embeds the ones the device uses.
        models = [k.model for k in kernels if k.model != None]
        if finn_model != None:
            models.append(finn_model)
        ctx.actions.run(
            cmd_args(
                ctx.attrs._deploy[DeployToolchainInfo].xclbin_pack,
                "--description",
                sim,
                "--platform",
                plat.name,
                "--platform-desc",
                plat.desc,
                "--out",
                xclbin.as_output(),
                hidden = models + descriptions,
            ),
            category = "xclbin_pack",
            identifier = device,
        )

    sub_targets = {
        "link_config": [DefaultInfo(default_output = cfg)],
        "sim_description": [DefaultInfo(default_output = sim)],
    }
    if plan != None:
        sub_targets["plan_slice"] = [DefaultInfo(default_output = plan)]
    if finn_xo_dir != None:
        sub_targets["finn_xo"] = [DefaultInfo(default_output = finn_xo_dir)]
    return [
        DefaultInfo(default_output = xclbin, sub_targets = sub_targets),
        BitstreamInfo(
            device = device,
            link_config = cfg,
            platform = plat.name,
            sim_description = sim,
            toolchain = fpga.kind,
            xclbin = xclbin,
        ),
    ]

vitis_link = rule(
    impl = _vitis_link_impl,
    attrs = {
        "clock_mhz": attrs.int(default = 250, doc = "kernel clock the FINN partition is built for"),
        "deployment": attrs.dep(providers = [DeploymentDescInfo]),
        "device": attrs.string(doc = "the device of the deployment this bitstream is for"),
        "flow_control": attrs.option(attrs.source(), default = None, doc = "the AuroraFlow kernel description (its [flow_control] sizing rule); default: the AuroraFlow toolchain's"),
        "kernels": attrs.list(attrs.dep(providers = [KernelInfo]), default = []),
        "partition": attrs.option(attrs.dep(providers = [PartitionPlanInfo]), default = None),
        "platform": attrs.string(default = "", doc = "the board (a file of toolchains/fpga_platforms/); \"\": the FPGA toolchain's default"),
        "replicas": attrs.bool(default = False, doc = "the partition is a replica plan (finn_partition(replicas = ...))"),
        "_aurora_flow": attrs.default_only(attrs.toolchain_dep(
            default = "toolchains//:aurora_flow",
            providers = [AuroraFlowToolchainInfo],
        )),
        "_deploy": attrs.default_only(attrs.toolchain_dep(
            default = "toolchains//:deploy",
            providers = [DeployToolchainInfo],
        )),
        "_finn": attrs.default_only(attrs.toolchain_dep(
            default = "toolchains//:finn",
            providers = [FinnToolchainInfo],
        )),
        "_fpga": attrs.default_only(attrs.toolchain_dep(
            default = "toolchains//:fpga",
            providers = [FpgaToolchainInfo],
        )),
    },
    doc = "One FPGA of a deployment: generated + validated v++ config (`[link_config]`), " +
          "the simulated device description (`[sim_description]`) and the xclbin.",
)
