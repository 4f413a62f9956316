"""FINN in the build graph: a model, every FINN build step as its own cached action,
the per-layer estimates, and the multi-FPGA partition with its per-device models.

The FINN step lists are stated once, in `finn/flow/steps.bzl`: `FRONT_END_STEPS` (the
estimate-only front end) and `AMD_ONLY_STEPS` (steps that need vitis_hls / Vivado / v++,
handed to the rules by the FINN toolchain as `amd_only_steps`; refused under `sim` at analysis, and `finn/flow/run_step.py` names the missing tool). Actions:
`finn_model` (`<name>.onnx`); `finn_train` (a training script's outputs, one action); `finn_steps`: one `finn_step` per step (`<step>.onnx`, a
sub-target per step) and `reports/`; `finn_estimates` (`estimates.json`); `finn_partition`:
`finn_partition` (`plan.json`, `folding/`), `finn_split` (`partitions/`) and
`finn_export_exec` (`exec/`, every partition and the unpartitioned model in the FINN
executor's format, sub-target `[exec]`); `finn_exec_test`: `finn_exec_reference` (FINN's
Python execution on seeded random frames), then `finn-exec check` against it; `finn_report`
(`report.txt`, `report.png`). FINN and the partitioner: [docs/finn.md](finn.md).
"""

load("//rules/toolchains:finn.bzl", "FinnToolchainInfo")
load("//rules/toolchains:fpga.bzl", "FpgaToolchainInfo", "fpga_platform")

_FINN_TOOLCHAIN = attrs.default_only(attrs.toolchain_dep(
    default = "toolchains//:finn",
    providers = [FinnToolchainInfo],
))

_FPGA_TOOLCHAIN = attrs.default_only(attrs.toolchain_dep(
    default = "toolchains//:fpga",
    providers = [FpgaToolchainInfo],
))

# The board whose part FINN's steps and estimates are for: a file of toolchains/fpga_platforms/.
_PLATFORM_ATTR = attrs.string(default = "", doc = "the board (a file of toolchains/fpga_platforms/) whose `part` FINN gets (--fpga-part); \"\": the FPGA toolchain's default")

def _fpga_part(ctx: AnalysisContext) -> str:
    """The part of the target's board, from its platform file (FINN's `fpga_part`)."""
    return fpga_platform(ctx.attrs._fpga[FpgaToolchainInfo], ctx.label, ctx.attrs.platform).part

FinnModelInfo = provider(
    doc = "`model`: Artifact, an ONNX model.",
    fields = {
        "model": provider_field(Artifact),
    },
)

FinnFlowInfo = provider(
    doc = "`model`: Artifact, the model after the last step; `steps`: dict step name -> " +
          "model after that step; `reports`: Artifact (dir) of FINN's estimate reports or None.",
    fields = {
        "model": provider_field(Artifact),
        "steps": provider_field(dict),
        "reports": provider_field(Artifact | None, default = None),
    },
)

FinnEstimatesInfo = provider(
    doc = "`estimates`: Artifact, per-layer estimates JSON (finn/flow/export_estimates.py); " +
          "`model`: Artifact, the HW model they describe.",
    fields = {
        "estimates": provider_field(Artifact),
        "model": provider_field(Artifact),
    },
)

PartitionPlanInfo = provider(
    doc = "`plan`: Artifact, plan JSON (layer -> device + folding, cuts, per-device resources " +
          "and FPS); `folding`: Artifact (dir), one FINN folding config per device; " +
          "`partitions`: Artifact (dir), one ONNX model per device plus partitions.json; " +
          "`exec`: Artifact (dir), every partition and the unpartitioned model in the " +
          "executor format of host/finn_exec (exec.json, <device>/, whole/); `model`: " +
          "Artifact, the unpartitioned HW model the plan splits (a replica plan's copies " +
          "and segments are cut from it).",
    fields = {
        "model": provider_field(Artifact),
        "plan": provider_field(Artifact),
        "folding": provider_field(Artifact),
        "partitions": provider_field(Artifact),
        "exec": provider_field(Artifact),
    },
)

# Steps that need vitis_hls / Vivado (finn-plus 1.6.1, finn/builder/build_dataflow_steps.py:
# step_hw_ipgen runs HLSSynthIP, step_set_fifo_depths regenerates IP, step_create_stitched_ip
# and step_out_of_context_synthesis run Vivado): only run with `[fpga] toolchain = vitis`.

def _finn_cmd(tc, script: str, args: list) -> cmd_args:
    # Scripts run from the sandbox's mirror of the project root; the toolchain's RunInfo of
    # the script carries its files (itself and what it imports) and the environment's
    # version file as inputs, and no other script.
    path = script if "/" in script else "finn/flow/" + script
    if path not in tc.scripts:
        fail("{} is not a script of the FINN toolchain; add it to FLOW_SCRIPTS in finn/flow/steps.bzl".format(path))
    return cmd_args(tc.scripts[path], args)

def finn_script(tc, script: str, args: list) -> cmd_args:
    """`finn/flow/<script> args` (or `<path> args` for a script elsewhere) with the FINN
    toolchain's Python, the script's files as inputs (for other rule files)."""
    return _finn_cmd(tc, script, args)

def finn_run(ctx: AnalysisContext, tc, command: cmd_args, category: str, identifier: str | None = None):
    """Runs a command of the FINN toolchain's Python as an action where the toolchain says
    it can run: its environment is this machine's, so `tc.local_only` keeps it off remote
    workers (buck2's `local_only`, the same under upstream buck2)."""
    if identifier:
        ctx.actions.run(command, category = category, identifier = identifier, local_only = tc.local_only)
    else:
        ctx.actions.run(command, category = category, local_only = tc.local_only)

def _finn_model_impl(ctx: AnalysisContext) -> list[Provider]:
    tc = ctx.attrs._finn[FinnToolchainInfo]
    out = ctx.actions.declare_output(ctx.label.name + ".onnx")
    args = ["--out", out.as_output()]
    if ctx.attrs.src:
        args += ["--from", ctx.attrs.src]
    else:
        args += ["--net", ctx.attrs.net, "--seed", str(ctx.attrs.seed)]
    finn_run(ctx, tc, _finn_cmd(tc, "finn/models/gen_model.py", args), "finn_model")
    return [DefaultInfo(default_output = out), FinnModelInfo(model = out)]

finn_model = rule(
    impl = _finn_model_impl,
    attrs = {
        "net": attrs.enum(["mobilenet_v1", "resnet50", "resnet_tiny", "tiny"], default = "mobilenet_v1"),
        "seed": attrs.int(default = 0),
        "src": attrs.option(attrs.source(), default = None),
        "_finn": _FINN_TOOLCHAIN,
    },
    doc = "A QONNX model: `src` (a user's ONNX file, checked and copied) or a generated " +
          "network with seeded random weights (`net`: MobileNet-V1 1.0/224 w4a4 with an " +
          "8-bit first layer, a tiny CNN of the same structure, `resnet_tiny`: a small " +
          "residual network with identity and projection shortcuts, or `resnet50`: ResNet-50 " +
          "at 224x224, w4a4 with 8-bit first and last layers).",
)

def _finn_train_impl(ctx: AnalysisContext) -> list[Provider]:
    tc = ctx.attrs._finn[FinnToolchainInfo]
    out = ctx.actions.declare_output(ctx.label.name, dir = True)
    finn_run(
        ctx,
        tc,
        # gen_model.py's files as inputs: training scripts import its QONNX helpers.
        cmd_args(
            tc.interpreter,
            ctx.attrs.script,
            "--out-dir",
            out.as_output(),
            hidden = ctx.attrs.srcs + [tc.scripts["finn/models/gen_model.py"]],
        ),
        "finn_train",
    )

    # One sub-target per output file, named without its extension (`:train[model]`).
    sub_targets = {
        f.partition(".")[0]: [DefaultInfo(default_output = out.project(f))]
        for f in ctx.attrs.outs
    }
    return [DefaultInfo(default_output = out, sub_targets = sub_targets)]

finn_train = rule(
    impl = _finn_train_impl,
    attrs = {
        "outs": attrs.list(attrs.string(), doc = "the files the script writes into --out-dir"),
        "script": attrs.source(doc = "the training script: `script --out-dir DIR`"),
        "srcs": attrs.list(attrs.source(), default = [], doc = "other files the script reads"),
        "_finn": _FINN_TOOLCHAIN,
    },
    doc = "Trains a network in the build graph: `script --out-dir DIR` with the FINN " +
          "toolchain's Python (finn/models/gen_model.py's QONNX helpers importable from " +
          "`finn/models`), one action, cached like any other. Each of `outs` is a " +
          "sub-target named without its extension, e.g. `:train[model]` for model.onnx, " +
          "which `finn_model(src = ...)` takes as a user's trained QONNX.",
)

def _finn_steps_impl(ctx: AnalysisContext) -> list[Provider]:
    tc = ctx.attrs._finn[FinnToolchainInfo]
    prev = ctx.attrs.model[FinnModelInfo].model
    steps = {}
    sub_targets = {}
    reports = None
    for entry in ctx.attrs.steps:
        # "name=step" exposes FINN step `step` as sub-target `name`.
        name, _, step = entry.partition("=") if "=" in entry else (entry, "", entry)
        if step in tc.amd_only_steps and tc.fpga != "vitis":
            fail("{}: step {} needs {}; set `-c fpga.toolchain=vitis` or drop it".format(ctx.label, step, tc.amd_only_steps[step]))
        out = ctx.actions.declare_output("{}.onnx".format(name))
        args = [
            "--step",
            step,
            "--in",
            prev,
            "--out",
            out.as_output(),
            "--clk-ns",
            str(ctx.attrs.clk_ns),
            "--fpga-part",
            _fpga_part(ctx),
        ]
        if ctx.attrs.target_fps:
            args += ["--target-fps", str(ctx.attrs.target_fps)]
        step_outputs = [out]

        # Only the steps that read a config get it as an input, so editing the folding
        # re-runs apply_folding_config and what follows, nothing before.
        if step == "apply_folding_config" and ctx.attrs.folding:
            args += ["--folding", ctx.attrs.folding]
        if step == "specialize_layers" and ctx.attrs.specialize:
            args += ["--specialize-config", ctx.attrs.specialize]
        if step == "generate_estimate_reports":
            reports = ctx.actions.declare_output("reports", dir = True)
            args += ["--report-dir", reports.as_output()]
            step_outputs.append(reports)
        finn_run(ctx, tc, _finn_cmd(tc, "run_step.py", args), "finn_step", name)
        steps[name] = out
        sub_targets[name] = [DefaultInfo(default_outputs = step_outputs)]
        prev = out
    return [
        DefaultInfo(default_output = prev, sub_targets = sub_targets),
        FinnFlowInfo(model = prev, steps = steps, reports = reports),
        FinnModelInfo(model = prev),
    ]

finn_steps = rule(
    impl = _finn_steps_impl,
    attrs = {
        "clk_ns": attrs.string(default = "4.0"),
        "folding": attrs.option(attrs.source(), default = None),
        "model": attrs.dep(providers = [FinnModelInfo]),
        "platform": _PLATFORM_ATTR,
        "specialize": attrs.option(attrs.source(), default = None),
        "steps": attrs.list(attrs.string()),
        "target_fps": attrs.int(default = 0),
        "_finn": _FINN_TOOLCHAIN,
        "_fpga": _FPGA_TOOLCHAIN,
    },
    doc = "FINN build steps, each its own action on the previous step's model; " +
          "`:name[step]` is the model after `step` (plus the reports for " +
          "generate_estimate_reports). Step names as finn/flow/run_step.py accepts them; " +
          "`name=step` names the sub-target `name`.",
)

def _finn_estimates_impl(ctx: AnalysisContext) -> list[Provider]:
    tc = ctx.attrs._finn[FinnToolchainInfo]
    model = ctx.attrs.flow[FinnModelInfo].model
    out = ctx.actions.declare_output("estimates.json")
    finn_run(
        ctx,
        tc,
        _finn_cmd(tc, "export_estimates.py", [
            "--in",
            model,
            "--out",
            out.as_output(),
            "--clk-ns",
            ctx.attrs.clk_ns,
            "--fpga-part",
            _fpga_part(ctx),
        ]),
        "finn_estimates",
    )
    return [DefaultInfo(default_output = out), FinnEstimatesInfo(estimates = out, model = model)]

finn_estimates = rule(
    impl = _finn_estimates_impl,
    attrs = {
        "clk_ns": attrs.string(default = "4.0"),
        "flow": attrs.dep(providers = [FinnModelInfo]),
        "platform": _PLATFORM_ATTR,
        "_finn": _FINN_TOOLCHAIN,
        "_fpga": _FPGA_TOOLCHAIN,
    },
    doc = "Per-layer cycles and resources (FINN's estimates for the board's part) and the " +
          "HW graph as one JSON. The U280 and U55C deployments share them: FINN's estimates " +
          "for the XCU280 and XCU55C parts are equal (//finn:partition_correctness).",
)

def _finn_partition_impl(ctx: AnalysisContext) -> list[Provider]:
    tc = ctx.attrs._finn[FinnToolchainInfo]
    est = ctx.attrs.estimates[FinnEstimatesInfo]
    plan = ctx.actions.declare_output("plan.json")
    folding = ctx.actions.declare_output("folding", dir = True)
    ctx.actions.run(
        cmd_args(
            ctx.attrs._finn[FinnToolchainInfo].partitioner,
            "--estimates",
            est.estimates,
            "--devices",
            ctx.attrs.devices,
            "--topology",
            ctx.attrs.topology,
            "--objective",
            ctx.attrs.objective,
            "--out",
            plan.as_output(),
            "--folding-dir",
            folding.as_output(),
            ["--replicas", ctx.attrs.replicas] if ctx.attrs.replicas else [],
            # every board's file: a device naming its `platform` takes totals and ports there
            [["--platform", p.desc] for _, p in sorted(ctx.attrs._fpga[FpgaToolchainInfo].platforms.items())],
        ),
        category = "finn_partition",
    )
    parts = ctx.actions.declare_output("partitions", dir = True)
    finn_run(
        ctx,
        tc,
        _finn_cmd(tc, "split_partitions.py", ["--in", est.model, "--plan", plan, "--out-dir", parts.as_output()]),
        "finn_split",
    )
    exec_dir = ctx.actions.declare_output("exec", dir = True)
    finn_run(
        ctx,
        tc,
        _finn_cmd(tc, "export_exec.py", [
            "--model",
            est.model,
            "--partitions",
            parts,
            "--out-dir",
            exec_dir.as_output(),
        ]),
        "finn_export_exec",
    )
    return [
        DefaultInfo(default_output = plan, sub_targets = {
            "exec": [DefaultInfo(default_output = exec_dir)],
            "folding": [DefaultInfo(default_output = folding)],
            "partitions": [DefaultInfo(default_output = parts)],
        }),
        PartitionPlanInfo(plan = plan, folding = folding, partitions = parts, exec = exec_dir, model = est.model),
    ]

finn_partition = rule(
    impl = _finn_partition_impl,
    attrs = {
        "devices": attrs.source(),
        "estimates": attrs.dep(providers = [FinnEstimatesInfo]),
        "objective": attrs.enum(["balanced", "min-cut", "throughput"], default = "balanced"),
        "replicas": attrs.option(attrs.string(), default = None, doc = "copies of the pipeline: \"auto\" or a count (throughput objective; unset = one copy)"),
        "topology": attrs.source(),
        "_finn": _FINN_TOOLCHAIN,
        "_fpga": _FPGA_TOOLCHAIN,
    },
    doc = "The MIP partitioner on `estimates` for the devices (JSON budgets, or a board's " +
          "`platform` whose file gives them) and topology " +
          "(chain, ring, switch or links): plan JSON, per-device folding configs " +
          "(`[folding]`), per-device partition models (`[partitions]`) and the same models " +
          "plus the unpartitioned one for the functional executor (`[exec]`). With " +
          "`replicas`, the plan lists every copy; `[partitions]` and `[exec]` split copy 0 by " +
          "device and add `segments/<first>__<last>` per distinct segment of a cut copy.",
)

def _finn_report_impl(ctx: AnalysisContext) -> list[Provider]:
    tc = ctx.attrs._finn[FinnToolchainInfo]
    plan = ctx.attrs.partition[PartitionPlanInfo].plan
    text = ctx.actions.declare_output("report.txt")
    png = ctx.actions.declare_output("report.png")
    finn_run(
        ctx,
        tc,
        _finn_cmd(tc, "report.py", ["--plan", plan, "--text", text.as_output(), "--png", png.as_output()]),
        "finn_report",
    )
    return [DefaultInfo(default_outputs = [text, png])]

finn_report = rule(
    impl = _finn_report_impl,
    attrs = {
        "partition": attrs.dep(providers = [PartitionPlanInfo]),
        "_finn": _FINN_TOOLCHAIN,
    },
    doc = "A partition plan as text and as a picture (per-device utilisation bars, the cuts).",
)

def _finn_python_test_impl(ctx: AnalysisContext) -> list[Provider]:
    tc = ctx.attrs._finn[FinnToolchainInfo]
    command = cmd_args(
        tc.python,
        # No bytecode (`__pycache__`, pytest's rewritten test modules) beside the sources: a
        # test writes nothing into the source tree, where a glob (a crate's `tests/**`) would
        # take it as a changed input of the build's actions.
        "-B",
        "-m",
        "pytest",
        "-q",
        # Skip reasons as `SKIPPED [n] file:line: why` lines, which `forge test` fails.
        "-rs",
        "-p",
        "no:cacheprovider",
        ctx.attrs.srcs,
        hidden = ctx.attrs.data + list(ctx.attrs.env_files.values()),
    )
    env = dict(ctx.attrs.env)
    for k, v in ctx.attrs.env_files.items():
        env[k] = cmd_args(v)
    env["FINN_PARTITION_BIN"] = cmd_args(ctx.attrs._finn[FinnToolchainInfo].partitioner, delimiter = " ")

    # -B for the Python processes the test starts too (a flow script, a training script)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return [
        DefaultInfo(),
        ExternalRunnerTestInfo(
            type = "pytest",
            command = [command],
            env = env,
            labels = ctx.attrs.labels,
        ),
    ]

finn_python_test = rule(
    impl = _finn_python_test_impl,
    attrs = {
        "data": attrs.list(attrs.source(), default = []),
        "env": attrs.dict(attrs.string(), attrs.string(), default = {}),
        # Variables holding the path of a built file (e.g. a network's estimates).
        "env_files": attrs.dict(attrs.string(), attrs.source(), default = {}),
        "labels": attrs.list(attrs.string(), default = []),
        "srcs": attrs.list(attrs.source()),
        "_finn": _FINN_TOOLCHAIN,
    },
    doc = "pytest over `srcs` in the FINN environment, with FINN_PARTITION_BIN set to the " +
          "partitioner binary and each `env_files` variable to its file's path.",
)

def _finn_exec_test_impl(ctx: AnalysisContext) -> list[Provider]:
    tc = ctx.attrs._finn[FinnToolchainInfo]
    plan = ctx.attrs.partition[PartitionPlanInfo]
    reference = ctx.actions.declare_output("reference", dir = True)

    # FINN's own Python execution produces the expected outputs (an action, so the
    # slow reference run is cached); the test runs only the executor against them.
    finn_run(
        ctx,
        tc,
        _finn_cmd(tc, "exec_reference.py", [
            "--model",
            ctx.attrs.estimates[FinnEstimatesInfo].model,
            "--partitions",
            plan.partitions,
            "--frames",
            str(ctx.attrs.frames),
            "--seed",
            str(ctx.attrs.seed),
            "--cases",
            ",".join(ctx.attrs.cases),
            "--out",
            reference.as_output(),
        ]),
        "finn_exec_reference",
    )
    command = cmd_args(
        ctx.attrs._finn[FinnToolchainInfo].executor,
        "check",
        "--exec",
        plan.exec,
        "--reference",
        reference,
    )
    return [
        DefaultInfo(default_output = reference),
        ExternalRunnerTestInfo(type = "finn_exec", command = [command], labels = ctx.attrs.labels),
    ]

finn_exec_test = rule(
    impl = _finn_exec_test_impl,
    attrs = {
        "cases": attrs.list(
            attrs.enum(["partitions", "chain", "whole"]),
            default = ["partitions", "chain", "whole"],
        ),
        "estimates": attrs.dep(providers = [FinnEstimatesInfo]),
        "frames": attrs.int(default = 8),
        "labels": attrs.list(attrs.string(), default = []),
        "partition": attrs.dep(providers = [PartitionPlanInfo]),
        "seed": attrs.int(default = 0),
        "_finn": _FINN_TOOLCHAIN,
    },
    doc = "Bit-exactness of the functional executor (host/finn_exec) against FINN's own " +
          "Python execution: `frames` seeded random frames per case — `partitions`: each " +
          "partition on random inputs of its input datatypes; `chain`: the partitions one " +
          "after another, every cut tensor compared; `whole`: the unpartitioned model, and " +
          "the executor's chain against FINN's unpartitioned output.",
)
