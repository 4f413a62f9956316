"""Remote execution's workers as a Slurm job.

`slurm_workers` is a runnable: `./forge run //remote:workers -- submit --count N --address
grpc://HOST:PORT [--profile noctua2|local] [--partition P] [--qos Q] [--time T] [--account A]`
runs `//rules/tools/re_workers` (an `exec_dep`), which writes a job directory (default
`buck-out/remote-workers/workers-<time>-<pid>/`: `job.sh`, a copy of the worker, the logs),
submits `job.sh` with the slurm toolchain's `sbatch` and prints the script's path and the
job id; `script` instead of `submit` only writes it. The job starts `--count` `worker`s
(forge-re-worker), one per Slurm task through `srun`, each offering the `platform`'s
`remote_execution_properties`, so they take exactly the actions that platform sends. Both
profiles come from one template (`noctua2`: partition `normal`, QoS `fpgasynthesis`, 32 CPUs
and 64G per worker, 4 h; `local`: the test cluster). The workers stop when the job ends or is
cancelled (`scancel`).

`slurm_workers_test` runs a test script with such a target's command as its arguments.
"""

load("//platforms:defs.bzl", "RemoteExecutionPropertiesInfo")
load("//rules/toolchains:slurm.bzl", "SlurmToolchainInfo")
load("//rules/toolchains:system.bzl", "SystemToolInfo", "tool_test_env")

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
        "_slurm": attrs.default_only(attrs.toolchain_dep(
            providers = [SlurmToolchainInfo],
            default = "toolchains//:slurm",
        )),
        "_tool": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//rules/tools/re_workers:re-workers",
        )),
    },
    doc = "Runnable: `submit` (or `script`) the Slurm job that starts remote execution " +
          "workers for the `platform`'s properties (profiles `noctua2` and `local`).",
)

def _slurm_workers_test_impl(ctx: AnalysisContext) -> list[Provider]:
    env, hidden = tool_test_env(ctx.attrs.tools)
    for name, artifact in ctx.attrs.env_files.items():
        env[name] = artifact
    command = cmd_args(
        "bash",
        ctx.attrs.test,
        ctx.attrs.workers[RunInfo],
        hidden = hidden + ctx.attrs.data + list(ctx.attrs.env_files.values()),
    )
    return [
        DefaultInfo(default_output = ctx.attrs.test),
        ExternalRunnerTestInfo(type = "sh", command = [command], env = env, labels = ctx.attrs.labels),
    ]

slurm_workers_test = rule(
    impl = _slurm_workers_test_impl,
    attrs = {
        "data": attrs.list(attrs.source(), default = []),
        "env_files": attrs.dict(attrs.string(), attrs.source(), default = {}),
        "labels": attrs.list(attrs.string(), default = []),
        "test": attrs.source(),
        "tools": attrs.list(attrs.toolchain_dep(providers = [SystemToolInfo]), default = []),
        "workers": attrs.dep(providers = [RunInfo], doc = "a `slurm_workers` target"),
    },
    doc = "Runs `bash test WORKERS_COMMAND...` from the project root: the command " +
          "`./forge run <workers> --` runs, then the verb. `env_files` names built files in the " +
          "env; each tool toolchain's command is in it as TOOL_<NAME>.",
)
