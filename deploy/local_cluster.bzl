"""The local Slurm cluster for users (deploy/local_cluster.sh): the tests' one-node cluster
(tools/testkit/slurm/slurm_cluster.sh), started and stopped by hand.

`local_slurm_cluster` is a runnable: `./forge run //deploy:local_cluster -- up|status|down
...` runs `bash deploy/local_cluster.sh --slurmctld C --sbatch S --srun R --check K` (the
slurm toolchain's commands, the tests' checker `check` for free ports) with the arguments given. `local_slurm_cluster_test` runs a test script
with that same command after `--`.
"""

load("//rules/toolchains:slurm.bzl", "SlurmToolchainInfo")
load("//rules/toolchains:system.bzl", "SystemToolInfo")

def _command(ctx: AnalysisContext) -> cmd_args:
    slurm = ctx.attrs._slurm[SlurmToolchainInfo]
    return cmd_args(
        "bash",
        ctx.attrs.script,
        "--slurmctld",
        ctx.attrs._slurm[SystemToolInfo].tool,
        "--sbatch",
        slurm.sbatch,
        "--srun",
        slurm.srun,
        "--check",
        ctx.attrs.check[RunInfo],
        hidden = ctx.attrs.data + [slurm.version],
    )

_ATTRS = {
    "check": attrs.exec_dep(providers = [RunInfo], doc = "testkit-check (tools/testkit/check)"),
    "data": attrs.list(attrs.source(), default = [], doc = "files the script reads"),
    "script": attrs.source(),
    "_slurm": attrs.default_only(attrs.toolchain_dep(
        providers = [SlurmToolchainInfo, SystemToolInfo],
        default = "toolchains//:slurm",
    )),
}

def _local_slurm_cluster_impl(ctx: AnalysisContext) -> list[Provider]:
    return [DefaultInfo(default_output = ctx.attrs.script), RunInfo(args = _command(ctx))]

local_slurm_cluster = rule(
    impl = _local_slurm_cluster_impl,
    attrs = _ATTRS,
    doc = "Runnable: `bash script --slurmctld C --sbatch S --srun R --check K ARGS...` with the " +
          "slurm toolchain's commands and `check` (deploy/local_cluster.sh: up, status, down).",
)

def _local_slurm_cluster_test_impl(ctx: AnalysisContext) -> list[Provider]:
    cluster = ctx.attrs.cluster[RunInfo]
    command = cmd_args("bash", ctx.attrs.test, "--", cluster, hidden = ctx.attrs.data)
    return [
        DefaultInfo(default_output = ctx.attrs.test),
        ExternalRunnerTestInfo(type = "sh", command = [command], labels = ctx.attrs.labels),
    ]

local_slurm_cluster_test = rule(
    impl = _local_slurm_cluster_test_impl,
    attrs = {
        "cluster": attrs.dep(providers = [RunInfo], doc = "a `local_slurm_cluster` target"),
        "data": attrs.list(attrs.source(), default = []),
        "labels": attrs.list(attrs.string(), default = []),
        "test": attrs.source(),
    },
    doc = "Runs `bash test -- CLUSTER...` from the project root, CLUSTER being the command " +
          "`./forge run <cluster> --` runs; exit 0 = pass.",
)
