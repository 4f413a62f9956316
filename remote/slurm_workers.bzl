"""Remote execution's workers as a Slurm job.

`slurm_workers` is a runnable: `./forge run //remote:workers -- submit --count N --address
grpc://HOST:PORT [--cluster NAME|FILE] [--partition P] [--qos Q] [--time T] [--account A]`
runs `//remote/workers_job:re-workers` (an `exec_dep`), which writes a job directory (default
`buck-out/remote-workers/workers-<time>-<pid>/`: `job.sh`, a copy of the worker, the logs),
submits `job.sh` with the slurm toolchain's `sbatch` and prints the script's path and the
job id; `script` instead of `submit` only writes it. The job starts `--count` `worker`s
(forge-re-worker), one per Slurm task through `srun`, each offering the `platform`'s
`remote_execution_properties`, so they take exactly the actions that platform sends. Every
cluster comes from one template, its request from the cluster's file (`[workers]` of
toolchains/clusters/<name>.toml, through `toolchains//:clusters`; `noctua2`: partition
`normal`, QoS `fpgasynthesis`, 32 CPUs and 64G per worker, 4 h; `local`: the test cluster);
`--cluster` names one of them (default: `[deploy] cluster`) or a cluster file's path. The workers stop when the job ends or is
cancelled (`scancel`).

`worker_pool_test` and `worker_pool_run` (a test, a runnable) run a script of
remote/tests/pool.sh with the engine, forge-re-grid, the stand-in tool and such a target's
command.
"""

load("//platforms:defs.bzl", "RemoteExecutionPropertiesInfo")
load("//rules/toolchains:cluster.bzl", "ClusterToolchainInfo")
load("//rules/toolchains:slurm.bzl", "SlurmToolchainInfo")
load("//rules/toolchains:system.bzl", "SystemToolInfo")

def _slurm_workers_impl(ctx: AnalysisContext) -> list[Provider]:
    slurm = ctx.attrs._slurm[SlurmToolchainInfo]
    properties = ctx.attrs.platform[RemoteExecutionPropertiesInfo].properties
    args = cmd_args(
        ctx.attrs._tool[RunInfo],
        "--worker",
        ctx.attrs.worker[RunInfo],
        "--sbatch",
        slurm.sbatch,
        "--srun",
        slurm.srun,
        hidden = [slurm.version],
    )
    for key in sorted(properties):
        args.add("--property", "{}={}".format(key, properties[key]))
    clusters = ctx.attrs._clusters[ClusterToolchainInfo]
    for name in sorted(clusters.clusters):
        args.add("--cluster-file", clusters.clusters[name])
    args.add("--default-cluster", clusters.default)
    return [DefaultInfo(), RunInfo(args = args)]

slurm_workers = rule(
    impl = _slurm_workers_impl,
    attrs = {
        "platform": attrs.dep(
            providers = [RemoteExecutionPropertiesInfo],
            default = "root//platforms:platforms",
            doc = "the execution platform whose remote actions the workers take",
        ),
        "worker": attrs.exec_dep(
            providers = [RunInfo],
            default = "root//remote:worker",
            doc = "the Remote Workers API bot each Slurm task runs",
        ),
        "_clusters": attrs.default_only(attrs.toolchain_dep(
            providers = [ClusterToolchainInfo],
            default = "toolchains//:clusters",
        )),
        "_slurm": attrs.default_only(attrs.toolchain_dep(
            providers = [SlurmToolchainInfo],
            default = "toolchains//:slurm",
        )),
        "_tool": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//remote/workers_job:re-workers",
        )),
    },
    doc = "Runnable: `submit` (or `script`) the Slurm job that starts remote execution " +
          "workers for the `platform`'s properties on a cluster of `toolchains//:clusters`.",
)

def _pool_command(ctx: AnalysisContext) -> cmd_args:
    """`bash script --forge F --grid G --standin S --slurm TOOL --check K --workers CMD...`
    (pool.sh)."""
    slurm = ctx.attrs._slurm[SystemToolInfo]
    return cmd_args(
        "bash",
        ctx.attrs.script,
        "--forge",
        ctx.attrs.forge[RunInfo],
        "--grid",
        ctx.attrs.grid[RunInfo],
        "--standin",
        ctx.attrs.standin[RunInfo],
        "--slurm",
        slurm.tool,
        "--check",
        ctx.attrs.check[RunInfo],
        "--workers",
        ctx.attrs.workers[RunInfo],
        hidden = ctx.attrs.data + [slurm.version],
    )

_POOL_ATTRS = {
    "check": attrs.exec_dep(providers = [RunInfo], doc = "testkit-check (tools/testkit/check): the cluster's free ports"),
    "data": attrs.list(attrs.source(), default = [], doc = "files the script reads"),
    "forge": attrs.exec_dep(providers = [RunInfo], default = "root//engine/forge:forge"),
    "grid": attrs.exec_dep(providers = [RunInfo], default = "root//remote:grid"),
    "script": attrs.source(),
    "standin": attrs.exec_dep(providers = [RunInfo], default = "root//remote/standin:pnr_standin"),
    "workers": attrs.dep(providers = [RunInfo], default = "root//remote:workers", doc = "a `slurm_workers` target"),
    "_slurm": attrs.default_only(attrs.toolchain_dep(
        providers = [SystemToolInfo],
        default = "toolchains//:slurm",
    )),
}

def _worker_pool_test_impl(ctx: AnalysisContext) -> list[Provider]:
    return [
        DefaultInfo(default_output = ctx.attrs.script),
        ExternalRunnerTestInfo(type = "sh", command = [_pool_command(ctx)], labels = ctx.attrs.labels),
    ]

worker_pool_test = rule(
    impl = _worker_pool_test_impl,
    attrs = dict(_POOL_ATTRS, labels = attrs.list(attrs.string(), default = [])),
    doc = "Runs `bash script --forge F --grid G --standin S --slurm TOOL --check K --workers " +
          "CMD...` from the project root: the engine, forge-re-grid, the stand-in tool, the " +
          "slurm toolchain's controller, the tests' checker and the command `./forge run " +
          "<workers> --` runs.",
)

def _worker_pool_run_impl(ctx: AnalysisContext) -> list[Provider]:
    # `--` ends the workers' command: what `./forge run` appends is the script's own options
    return [DefaultInfo(default_output = ctx.attrs.script), RunInfo(args = cmd_args(_pool_command(ctx), "--"))]

worker_pool_run = rule(
    impl = _worker_pool_run_impl,
    attrs = _POOL_ATTRS,
    doc = "Runnable: the same command as `worker_pool_test`, then `--` and the arguments of " +
          "`./forge run` (a benchmark's options).",
)
