"""A whole multi-FPGA deployment from ONE description (`deploy/<name>.toml`): the checked
description and the partitioner's inputs, the FINN partition plan (whose topology comes
from the same file, so cuts and cables agree by construction), one `vitis_link` per
device, the Slurm job script, the run script, the topology and an HTML report.

```text
  fpga_deployment(name = "mobilenet_2fpga", description = "mobilenet_2fpga.toml", ...)
```

makes `:mobilenet_2fpga` (DeploymentInfo + RunInfo; `forge run` / `buck2 run` starts it),
whose default output is the bundle `mobilenet_2fpga/` (everything a run on the cluster needs,
with SHA256SUMS; `sbatch mobilenet_2fpga/job.sh` wherever it is copied), with sub-targets
`[bundle]`, `[link_config_<dev>]`, `[xclbin_<dev>]`, `[topology]`, `[job_script]`,
`[run_script]`, `[report]`, and the helper targets `:<name>__desc`, `:<name>__partition`,
`:<name>__<dev>`.

`fpga_deployment` makes `:<name>__desc` (`deployment_description`: `deploy_check`,
`deploy_partitioner_inputs` → `[devices]`, `[topology]`), `:<name>__partition`
(`finn_partition` on those inputs, so the partitioner only cuts where there is a cable), one
`vitis_link` `:<name>__<device>` per device, and `:<name>` (`fpga_deployment_rule`: actions
`deploy_scripts` → `job.sh`, `run.sh`, `topology.json`; `deploy_report` → `report.html`). A
FINN deployment's scripts pass the executor export to the host as `--reference`.

Every action runs `deploy-tool` (deploy/tool, through `toolchains//:deploy`): it reads
`deploy/<name>.toml` (devices with node/card/clock, cables as `device:port` pairs or a
generated `chain`/`ring`/`pair`/`loopback` topology, `app = "finn" | "aurora_bench" | "hls"`) against
the platform TOML of `toolchains//:fpga`; subcommands `check`, `partitioner-inputs`,
`plan-slice`, `link-config`, `scripts` (Slurm `job.sh` for `--cluster FILE`, one per
cluster file of `toolchains//:clusters`, and `run.sh`), `report` (HTML + inline SVG). Errors name the file and line (`error:
deploy/x.toml:12: ...`), exit 1 and write nothing. A FINN cable carries its cut in one
direction; the link kernel's other direction gets a tie-off (`//hw/hls:tie_off_source`,
`//hw/hls:tie_off_sink`), as FINN+ 1.6.1 parks its `tx_dummy_kernel` / `rx_dummy_kernel`
there. Format, checks and outputs: [`deploy/tool/README.md`](../deploy/tool/README.md).
"""

load("//rules:finn.bzl", "FinnEstimatesInfo", "PartitionPlanInfo", "finn_partition", "finn_run", "finn_script")
load("//rules:vitis_link.bzl", "BitstreamInfo", "DeploymentDescInfo", "vitis_link")
load("//rules/toolchains:cluster.bzl", "ClusterToolchainInfo")
load("//rules/toolchains:deploy.bzl", "DeployToolchainInfo")
load("//rules/toolchains:finn.bzl", "FinnToolchainInfo")
load("//rules/toolchains:fpga.bzl", "FpgaToolchainInfo", "fpga_platform")
load("//rules/toolchains:python.bzl", "PythonToolchainInfo")
load("//rules/toolchains:system.bzl", "SystemToolInfo", "tool_test_env")

_DEPLOY_TOOLCHAIN = attrs.default_only(attrs.toolchain_dep(
    default = "toolchains//:deploy",
    providers = [DeployToolchainInfo],
))

_FPGA_TOOLCHAIN = attrs.default_only(attrs.toolchain_dep(
    default = "toolchains//:fpga",
    providers = [FpgaToolchainInfo],
))

_CLUSTER_TOOLCHAIN = attrs.default_only(attrs.toolchain_dep(
    default = "toolchains//:clusters",
    providers = [ClusterToolchainInfo],
))

# The board of a deployment's cards: the `platform` of its description, which `deploy-tool
# check` compares with this file's name (error at the description's `platform =` line).
_PLATFORM_ATTR = attrs.string(default = "", doc = "the board (a file of toolchains/fpga_platforms/, the description's `platform`); \"\": the FPGA toolchain's default")

_FINN_TOOLCHAIN = attrs.default_only(attrs.toolchain_dep(
    default = "toolchains//:finn",
    providers = [FinnToolchainInfo],
))

DeploymentInfo = provider(
    doc = "A built deployment. `name`: str; `devices`: list[str] in pipeline order; " +
          "`xclbins`, `link_configs`, `sim_descriptions`: dict device -> Artifact; " +
          "`topology`: Artifact (JSON: devices, cables, cuts); `job_script`, " +
          "`run_script`, `report`: Artifact; `job_scripts`: dict cluster -> job " +
          "script (one per cluster file of toolchains//:clusters); `host`: Artifact, the " +
          "host driver; `bundle`: Artifact (dir), the self-contained directory to take to " +
          "the cluster; `bundles`: dict cluster -> bundle; " +
          "`cluster`: str, the cluster of `job_script` and `bundle`; for a FINN " +
          "network `finn_exec` (the plan's executor export: exec.json, <device>/, whole/), " +
          "`finn_partitions` (the partition ONNX models) and `finn_model` (the unpartitioned " +
          "HW model), else None; `run_inputs`: list[Artifact], every file the run " +
          "script reads (host, xclbins, and for FINN the exec export, plan and budgets).",
    fields = {
        "bundle": provider_field(Artifact),
        "bundles": provider_field(dict[str, Artifact]),
        "cluster": provider_field(str),
        "devices": provider_field(list),
        "finn_exec": provider_field(Artifact | None, default = None),
        "finn_model": provider_field(Artifact | None, default = None),
        "finn_partitions": provider_field(Artifact | None, default = None),
        "host": provider_field(Artifact),
        "job_script": provider_field(Artifact),
        "job_scripts": provider_field(dict),
        "link_configs": provider_field(dict),
        "name": provider_field(str),
        "report": provider_field(Artifact),
        "run_inputs": provider_field(list),
        "run_script": provider_field(Artifact),
        "sim_descriptions": provider_field(dict),
        "topology": provider_field(Artifact),
        "xclbins": provider_field(dict),
    },
)

def _deployment_description_impl(ctx: AnalysisContext) -> list[Provider]:
    fpga = ctx.attrs._fpga[FpgaToolchainInfo]
    tool = ctx.attrs._deploy[DeployToolchainInfo].compiler
    base = [
        "--deployment",
        ctx.attrs.description,
        "--platform",
        fpga_platform(fpga, ctx.label, ctx.attrs.platform).desc,
    ]
    checked = ctx.actions.declare_output("checked.txt")
    ctx.actions.run(
        cmd_args(
            tool,
            "check",
            base,
            "--devices",
            ",".join(ctx.attrs.devices),
            "--name",
            ctx.attrs.deployment_name,
            "--stamp",
            checked.as_output(),
        ),
        category = "deploy_check",
    )
    devices_json = ctx.actions.declare_output("devices.json")
    topology_json = ctx.actions.declare_output("topology.json")
    ctx.actions.run(
        cmd_args(
            tool,
            "partitioner-inputs",
            base,
            "--devices-out",
            devices_json.as_output(),
            "--topology-out",
            topology_json.as_output(),
            hidden = [checked],
        ),
        category = "deploy_partitioner_inputs",
    )
    return [
        DefaultInfo(
            default_output = checked,
            sub_targets = {
                "devices": [DefaultInfo(default_output = devices_json)],
                "topology": [DefaultInfo(default_output = topology_json)],
            },
        ),
        DeploymentDescInfo(
            checked = checked,
            description = ctx.attrs.description,
            devices = ctx.attrs.devices,
            devices_json = devices_json,
            name = ctx.attrs.deployment_name,
            topology_json = topology_json,
        ),
    ]

deployment_description = rule(
    impl = _deployment_description_impl,
    attrs = {
        "deployment_name": attrs.string(),
        "description": attrs.source(doc = "deploy/<name>.toml"),
        "devices": attrs.list(attrs.string(), doc = "device names as in the TOML, in order (checked against it)"),
        "platform": _PLATFORM_ATTR,
        "_deploy": _DEPLOY_TOOLCHAIN,
        "_fpga": _FPGA_TOOLCHAIN,
    },
    doc = "A deployment description, validated against the FPGA platform (`deploy-tool " +
          "check`), and the partitioner's devices/topology inputs derived from it.",
)

def _deploy_tool_per_cluster(tool, verb: str, desc, platform_desc, cluster: Artifact, host, links: dict) -> cmd_args:
    """`deploy-tool VERB` with what every per-cluster step reads: the description, the
    platform, the cluster file, the host driver and each card's xclbin."""
    args = cmd_args(
        tool,
        verb,
        "--deployment",
        desc.description,
        "--platform",
        platform_desc,
        "--cluster",
        cluster,
        "--host",
        host,
        hidden = [desc.checked],
    )
    for d in desc.devices:
        args.add("--xclbin", cmd_args(d, "=", links[d].xclbin, delimiter = ""))
    return args

def _fpga_deployment_impl(ctx: AnalysisContext) -> list[Provider]:
    platform_desc = fpga_platform(ctx.attrs._fpga[FpgaToolchainInfo], ctx.label, ctx.attrs.platform).desc
    desc = ctx.attrs.deployment[DeploymentDescInfo]
    tool = ctx.attrs._deploy[DeployToolchainInfo].compiler
    links = {}
    for link in ctx.attrs.links:
        info = link[BitstreamInfo]
        links[info.device] = info
    missing = [d for d in desc.devices if d not in links]
    if missing:
        fail("{}: no bitstream for device(s) {}".format(ctx.label, ", ".join(missing)))
    host = ctx.attrs.host[DefaultInfo].default_outputs[0]
    plan_info = ctx.attrs.partition[PartitionPlanInfo] if ctx.attrs.partition else None
    plan = plan_info.plan if plan_info else None
    finn_exec = plan_info.exec if plan_info else None

    # Every cluster's job script from the one template; `[job_script]` is the configured one's.
    clusters = ctx.attrs._clusters[ClusterToolchainInfo]
    configured = ctx.attrs.cluster or clusters.default
    if configured not in clusters.clusters:
        fail("{}: cluster = {}: no such cluster file; the clusters: {} (toolchains/clusters/<name>.toml)".format(
            ctx.label,
            configured,
            ", ".join(sorted(clusters.clusters)),
        ))
    job_scripts = {}
    topologies = {}
    run = None
    topology = None
    for cluster in sorted(clusters.clusters):
        prefix = "" if cluster == configured else cluster + "/"
        job = ctx.actions.declare_output(prefix + "job_{}.sh".format(cluster))
        this_run = ctx.actions.declare_output(prefix + "run.sh")
        this_topology = ctx.actions.declare_output(prefix + "topology.json")
        scripts = _deploy_tool_per_cluster(tool, "scripts", desc, platform_desc, clusters.clusters[cluster], host, links)
        if plan != None:
            scripts.add("--plan", plan)
        if finn_exec != None:
            scripts.add("--finn-exec", finn_exec, "--devices-json", desc.devices_json)

        # The banks each link step bound (topology.json lists them for a user's HLS CUs).
        for d in desc.devices:
            scripts.add("--sim", links[d].sim_description)
        scripts.add("--job-out", job.as_output(), "--run-out", this_run.as_output(), "--topology-out", this_topology.as_output())
        ctx.actions.run(scripts, category = "deploy_scripts", identifier = cluster)
        job_scripts[cluster] = job
        topologies[cluster] = this_topology
        if cluster == configured:
            run = this_run
            topology = this_topology
    job = job_scripts[configured]

    report = ctx.actions.declare_output("report.html")
    rep = cmd_args(
        tool,
        "report",
        "--deployment",
        desc.description,
        "--platform",
        platform_desc,
        "--out",
        report.as_output(),
        hidden = [desc.checked],
    )
    if plan != None:
        rep.add("--plan", plan)
    for d in desc.devices:
        rep.add("--sim", links[d].sim_description)
    ctx.actions.run(rep, category = "deploy_report")

    sub_targets = {
        "job_script": [DefaultInfo(default_output = job)],
        "report": [DefaultInfo(default_output = report)],
        "run_script": [DefaultInfo(default_output = run)],
        "topology": [DefaultInfo(default_output = topology)],
    }
    for cluster in job_scripts:
        sub_targets["job_script_" + cluster] = [DefaultInfo(default_output = job_scripts[cluster])]
    for d in desc.devices:
        sub_targets["link_config_" + d] = [DefaultInfo(default_output = links[d].link_config)]
        sub_targets["xclbin_" + d] = [DefaultInfo(default_output = links[d].xclbin)]
    xclbins = [links[d].xclbin for d in desc.devices]

    # A FINN run also reads the plan and the budgets (the run report of `infer`).
    finn_run_inputs = [finn_exec, plan, desc.devices_json] if finn_exec else []
    run_inputs = [host] + xclbins + finn_run_inputs

    # The one directory to take to the cluster: every file a run reads, scripts whose paths
    # are relative to it, and SHA256SUMS; `--out DIR` copies it out. One per cluster, as the
    # job scripts: `[bundle]` is the configured one, `[bundle_local]` runs under any Slurm.
    bundles = {}
    for cluster in sorted(clusters.clusters):
        prefix = "" if cluster == configured else cluster + "/"
        this_bundle = ctx.actions.declare_output(prefix + ctx.label.name, dir = True)
        pack = _deploy_tool_per_cluster(tool, "bundle", desc, platform_desc, clusters.clusters[cluster], host, links)
        pack.add("--topology", topologies[cluster], "--report", report)
        if finn_exec != None:
            pack.add("--finn-exec", finn_exec, "--plan", plan, "--devices-json", desc.devices_json)
        pack.add("--out", this_bundle.as_output())
        ctx.actions.run(pack, category = "deploy_bundle", identifier = cluster)
        bundles[cluster] = this_bundle
        sub_targets["bundle_" + cluster] = [DefaultInfo(default_output = this_bundle)]
    bundle = bundles[configured]
    sub_targets["bundle"] = [DefaultInfo(default_output = bundle)]
    return [
        DefaultInfo(
            default_output = bundle,
            other_outputs = [job, run, topology, report] + xclbins + [host] +
                            [links[d].link_config for d in desc.devices] + finn_run_inputs,
            sub_targets = sub_targets,
        ),
        RunInfo(args = cmd_args("bash", run, hidden = run_inputs)),
        DeploymentInfo(
            bundle = bundle,
            bundles = bundles,
            cluster = configured,
            devices = desc.devices,
            finn_exec = finn_exec,
            finn_model = ctx.attrs.estimates[FinnEstimatesInfo].model if ctx.attrs.estimates else None,
            finn_partitions = plan_info.partitions if plan_info else None,
            host = host,
            job_script = job,
            job_scripts = job_scripts,
            link_configs = {d: links[d].link_config for d in desc.devices},
            name = desc.name,
            report = report,
            run_inputs = run_inputs,
            run_script = run,
            sim_descriptions = {d: links[d].sim_description for d in desc.devices},
            topology = topology,
            xclbins = {d: links[d].xclbin for d in desc.devices},
        ),
    ]

fpga_deployment_rule = rule(
    impl = _fpga_deployment_impl,
    attrs = {
        "deployment": attrs.dep(providers = [DeploymentDescInfo]),
        "estimates": attrs.option(attrs.dep(providers = [FinnEstimatesInfo]), default = None),
        "host": attrs.dep(doc = "the host driver binary (cargo_binary)"),
        "links": attrs.list(attrs.dep(providers = [BitstreamInfo])),
        "partition": attrs.option(attrs.dep(providers = [PartitionPlanInfo]), default = None),
        "cluster": attrs.option(attrs.string(), default = None, doc = "the cluster of `[job_script]` and `[bundle]`; default: `[deploy] cluster` (toolchains//:clusters)"),
        "_clusters": _CLUSTER_TOOLCHAIN,
        "platform": _PLATFORM_ATTR,
        "_deploy": _DEPLOY_TOOLCHAIN,
        "_fpga": _FPGA_TOOLCHAIN,
    },
)

def fpga_deployment(
        name,
        description,
        devices,
        kernels,
        host,
        estimates = None,
        objective = "throughput",
        clock_mhz = 250,
        flow_control = None,
        cluster = None,
        platform = None,
        replicas = None,
        visibility = None):
    """A deployment: `description` (TOML), `devices` (its device names, in order; checked
    against the TOML), `kernels` (every kernel a device may carry: AuroraFlow per QSFP
    port, DMA and benchmark kernels, tie-offs, a user's `hls_kernel`s), `host` (cargo_binary of the host driver), and for a
    FINN network `estimates` (finn_estimates) which the partitioner splits with
    `objective` over the deployment's devices and cables; `replicas` ("auto" or a count,
    throughput objective) asks it for copies of the pipeline, each card carrying its copies'
    CUs and each copy its own input and output DMA. `cluster` (a file of
    toolchains/clusters) of `[job_script]` and `[bundle]` defaults to `[deploy] cluster`
    (noctua2); every cluster's are `[job_script_<cluster>]` and `[bundle_<cluster>]`.
    `platform` names the board of every card (the description's `platform`, a file of
    toolchains/fpga_platforms/; default: the FPGA toolchain's), for the link configs,
    xclbins, scripts and report."""
    desc = name + "__desc"
    deployment_description(
        name = desc,
        deployment_name = name,
        description = description,
        devices = devices,
        platform = platform or "",
        visibility = visibility,
    )
    partition = None
    if estimates:
        partition = ":{}__partition".format(name)
        finn_partition(
            name = name + "__partition",
            devices = ":{}[devices]".format(desc),
            estimates = estimates,
            objective = objective,
            replicas = replicas,
            topology = ":{}[topology]".format(desc),
            visibility = visibility,
        )
    links = []
    for device in devices:
        vitis_link(
            name = "{}__{}".format(name, device),
            clock_mhz = clock_mhz,
            deployment = ":" + desc,
            device = device,
            flow_control = flow_control,
            kernels = kernels,
            partition = partition,
            platform = platform or "",
            replicas = replicas != None,
        )
        links.append(":{}__{}".format(name, device))
    fpga_deployment_rule(
        name = name,
        deployment = ":" + desc,
        estimates = estimates,
        host = host,
        links = links,
        partition = partition,
        cluster = cluster,
        platform = platform or "",
        visibility = visibility,
    )

def _deployment_test_impl(ctx: AnalysisContext) -> list[Provider]:
    tool_env, hidden = tool_test_env(ctx.attrs.tools)
    if ctx.attrs.python:
        # the python toolchain's interpreter for the test's Python checks, never one from PATH
        python = ctx.attrs.python[PythonToolchainInfo]
        tool_env["PYTHON"] = python.interpreter
        hidden = hidden + [python.version]
    args = cmd_args(
        ctx.attrs.interpreter,
        ctx.attrs.test,
        hidden = hidden + ctx.attrs.data + list(ctx.attrs.env_files.values()),
    )
    for dep in ctx.attrs.deployments:
        d = dep[DeploymentInfo]
        args.add(cmd_args(
            "--deployment",
            d.name,
            d.topology,
            d.report,
            d.job_scripts["local"],
            d.run_script,
            d.bundles["local"],
            hidden = d.run_inputs,
        ))
    return [
        DefaultInfo(default_output = ctx.attrs.test),
        ExternalRunnerTestInfo(
            type = "sh",
            command = [args],
            # the tools the script runs, by toolchain: TOOL_<NAME>=command
            env = dict(tool_env, **dict(ctx.attrs.env, **ctx.attrs.env_files)),
            labels = ctx.attrs.labels,
        ),
    ]

deployment_test = rule(
    impl = _deployment_test_impl,
    attrs = {
        "data": attrs.list(attrs.source(), default = []),
        "deployments": attrs.list(attrs.dep(providers = [DeploymentInfo])),
        "env": attrs.dict(attrs.string(), attrs.string(), default = {}),
        "env_files": attrs.dict(attrs.string(), attrs.source(), default = {}),
        "interpreter": attrs.string(default = "bash"),
        "labels": attrs.list(attrs.string(), default = []),
        "python": attrs.option(attrs.toolchain_dep(providers = [PythonToolchainInfo]), default = None),
        "test": attrs.source(),
        "tools": attrs.list(attrs.toolchain_dep(providers = [SystemToolInfo]), default = []),
    },
    doc = "Runs `test` from the project root with, per deployment, `--deployment NAME " +
          "TOPOLOGY REPORT LOCAL_JOB_SCRIPT RUN_SCRIPT LOCAL_BUNDLE` (everything built first); each tool " +
          "toolchain's command is in the env as TOOL_<NAME>, each `env_files` variable names its " +
          "built file (project-relative path), `python`'s interpreter is in PYTHON.",
)

def image_counts(spec: str) -> list[int]:
    """Image counts for `deployment_infer_test` from a config string: "1,2,5" or "1-40"."""
    if "-" in spec:
        lo, hi = spec.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(n) for n in spec.split(",")]

FinnInferReferenceInfo = provider(
    doc = "FINN's own Python execution of a deployment's unpartitioned network on seeded " +
          "random images (finn/flow/exec_reference.py, case `whole`): the reference of a " +
          "`deployment_infer_test`, which another such test of the same network may share.",
    fields = {
        "frames": provider_field(int),
        "model": provider_field(Artifact),
        "reference": provider_field(Artifact),
    },
)

def _infer_reference(ctx: AnalysisContext, d: DeploymentInfo) -> FinnInferReferenceInfo:
    """The test's own reference, or the one it shares (`reference`), checked to be of the
    same network and to hold every image count."""
    counts = ctx.attrs.image_counts
    if ctx.attrs.reference:
        shared = ctx.attrs.reference[FinnInferReferenceInfo]
        if shared.model != d.finn_model:
            fail("{}: `reference` {} executes another network than deployment {}; share a reference only between deployments of one network".format(ctx.label, ctx.attrs.reference.label, d.name))
        if ctx.attrs.frames != None or ctx.attrs.seed != None:
            fail("{}: `frames` and `seed` are those of the shared `reference`; leave them out".format(ctx.label))
        if not counts:
            fail("{}: a test sharing `reference` names its `image_counts`".format(ctx.label))
        for n in counts:
            if n < 1 or n > shared.frames:
                fail("{}: image_counts has {}; each count must be 1..{}, the frames of `reference` {}".format(ctx.label, n, shared.frames, ctx.attrs.reference.label))
        return shared
    frames = ctx.attrs.frames if ctx.attrs.frames != None else 8
    for n in counts:
        if n < 1 or n > frames:
            fail("{}: image_counts has {}; each count must be 1..frames ({})".format(ctx.label, n, frames))
    tc = ctx.attrs._finn[FinnToolchainInfo]
    reference = ctx.actions.declare_output("reference", dir = True)

    # FINN's own Python execution of the unpartitioned model on seeded random images (an
    # action, so the slow reference is cached); the test runs the deployment against it.
    finn_run(
        ctx,
        tc,
        finn_script(tc, "exec_reference.py", [
            "--model",
            d.finn_model,
            "--frames",
            str(frames),
            "--seed",
            str(ctx.attrs.seed if ctx.attrs.seed != None else 0),
            "--cases",
            "whole",
            "--out",
            reference.as_output(),
        ]),
        "finn_infer_reference",
    )
    return FinnInferReferenceInfo(frames = frames, model = d.finn_model, reference = reference)

def _deployment_infer_test_impl(ctx: AnalysisContext) -> list[Provider]:
    d = ctx.attrs.deployment[DeploymentInfo]
    if d.finn_exec == None or d.finn_model == None:
        fail("{}: deployment {} runs no FINN network; infer tests need one".format(ctx.label, d.name))
    tc = ctx.attrs._finn[FinnToolchainInfo]
    ref = _infer_reference(ctx, d)
    reference = ref.reference
    args = cmd_args(
        ctx.attrs.interpreter,
        ctx.attrs.test,
        d.name,
        d.run_script,
        reference,
        tc.python,
        ctx.attrs.checker,
        "bad-input" if ctx.attrs.bad_input else "no-bad-input",
        ",".join([str(n) for n in ctx.attrs.image_counts]) or "all",
        hidden = d.run_inputs,
    )
    return [
        DefaultInfo(default_output = reference),
        ref,
        ExternalRunnerTestInfo(type = "sh", command = [args], labels = ctx.attrs.labels),
    ]

deployment_infer_test = rule(
    impl = _deployment_infer_test_impl,
    attrs = {
        "bad_input": attrs.bool(default = False, doc = "also feed a wrong-shape file and check the error"),
        "checker": attrs.source(doc = "the Python check of the outputs and run.json"),
        "deployment": attrs.dep(providers = [DeploymentInfo]),
        "frames": attrs.option(attrs.int(), default = None, doc = "how many seeded random images the reference holds (default 8)"),
        "image_counts": attrs.list(
            attrs.int(),
            default = [],
            doc = "run `infer --images N` for each N (the first N images), each bit-exact; " +
                  "empty: one run of all `frames`",
        ),
        "interpreter": attrs.string(default = "bash"),
        "labels": attrs.list(attrs.string(), default = []),
        "reference": attrs.option(
            attrs.dep(providers = [FinnInferReferenceInfo]),
            default = None,
            doc = "another `deployment_infer_test` of the same network whose reference this " +
                  "test takes (its frames and seed) instead of executing the network again",
        ),
        "seed": attrs.option(attrs.int(), default = None, doc = "the random images' seed (default 0)"),
        "test": attrs.source(),
        "_finn": _FINN_TOOLCHAIN,
    },
    doc = "Runs `infer` on a FINN deployment (its run script, all ranks) with `frames` seeded " +
          "random images and checks the outputs bit for bit against FINN's own Python " +
          "execution (finn/flow/exec_reference.py, `execute_onnx`) of the unpartitioned model.",
)

def _finn_widths_test_impl(ctx: AnalysisContext) -> list[Provider]:
    d = ctx.attrs.deployment[DeploymentInfo]
    plan = ctx.attrs.partition[PartitionPlanInfo]
    if d.finn_model == None:
        fail("{}: deployment {} runs no FINN network".format(ctx.label, d.name))
    tc = ctx.attrs._finn[FinnToolchainInfo]
    args = cmd_args(
        tc.python,
        # no bytecode beside the FINN flow modules the check imports (finn_python_test's -B)
        "-B",
        ctx.attrs.test,
        "--model",
        d.finn_model,
        "--plan",
        plan.plan,
        "--folding",
        plan.folding,
        "--partitions",
        plan.partitions,
    )
    for dev in d.devices:
        args.add("--sim", cmd_args(dev, "=", d.sim_descriptions[dev], delimiter = ""))
    return [
        DefaultInfo(default_output = ctx.attrs.test),
        ExternalRunnerTestInfo(type = "python", command = [args], labels = ctx.attrs.labels),
    ]

finn_widths_test = rule(
    impl = _finn_widths_test_impl,
    attrs = {
        "deployment": attrs.dep(providers = [DeploymentInfo]),
        "labels": attrs.list(attrs.string(), default = []),
        "partition": attrs.dep(providers = [PartitionPlanInfo], doc = "the deployment's partition plan target"),
        "test": attrs.source(),
        "_finn": _FINN_TOOLCHAIN,
    },
    doc = "Checks the stream widths of a FINN deployment's cuts and DMAs (plan, link " +
          "configurations, the host's word layout) against what the installed finn-plus " +
          "inserts there (InsertDWC, InsertIODMA) on the HW model with the plan's folding.",
)

def _deployment_accuracy_test_impl(ctx: AnalysisContext) -> list[Provider]:
    d = ctx.attrs.deployment[DeploymentInfo]
    if d.finn_exec == None:
        fail("{}: deployment {} runs no FINN network; accuracy tests need one".format(ctx.label, d.name))
    tc = ctx.attrs._finn[FinnToolchainInfo]
    args = cmd_args(
        tc.python,
        # no bytecode beside the FINN flow modules the check imports (finn_python_test's -B)
        "-B",
        ctx.attrs.test,
        "--deployment",
        d.name,
        "--run",
        d.run_script,
        "--data",
        ctx.attrs.data[DefaultInfo].default_outputs[0],
        "--bound-points",
        str(ctx.attrs.bound_points),
        hidden = d.run_inputs,
    )
    return [
        DefaultInfo(default_output = ctx.attrs.test),
        ExternalRunnerTestInfo(type = "python", command = [args], labels = ctx.attrs.labels),
    ]

deployment_accuracy_test = rule(
    impl = _deployment_accuracy_test_impl,
    attrs = {
        "bound_points": attrs.int(doc = "how many percentage points below the float model's top-1 the quantised network may be"),
        "data": attrs.dep(doc = "the labelled held-out data and the float model (a `finn_train` directory)"),
        "deployment": attrs.dep(providers = [DeploymentInfo]),
        "labels": attrs.list(attrs.string(), default = []),
        "test": attrs.source(doc = "the Python check, run with the FINN toolchain's Python"),
        "_finn": _FINN_TOOLCHAIN,
    },
    doc = "Runs `infer --input --labels` on a FINN deployment with a trained network's " +
          "held-out images (`data`) and checks the accuracy it reports against the labels " +
          "and against the float model (`test --deployment NAME --run RUN_SCRIPT --data DIR " +
          "--bound-points N`).",
)
