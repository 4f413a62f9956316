"""Slurm (Debian's slurm-wlm): the daemons the test clusters start and the client commands
that submit, run and cancel jobs. The client commands ask a cluster even for `--version`, so
the installation is identified by `slurmctld -V`, and the commands are names of that same
installation's programs on PATH (the test scripts call the others, `scancel`, `scontrol`,
beside them).
"""

load("//rules/toolchains:system.bzl", "SystemToolInfo", "probe_tool_version")

SlurmToolchainInfo = provider(
    doc = "Slurm's client commands. `sbatch`, `srun`: str, commands on PATH; " +
          "`version`: Artifact, `slurmctld -V` (add it to `hidden` of what runs them).",
    fields = {
        "sbatch": provider_field(str),
        "srun": provider_field(str),
        "version": provider_field(Artifact),
    },
)

def _slurm_toolchain_impl(ctx: AnalysisContext) -> list[Provider]:
    version = probe_tool_version(ctx, ctx.attrs._probe, [[ctx.attrs.controller, "-V"]])
    return [
        DefaultInfo(default_output = version),
        # tests get TOOL_SLURMCTLD (system.bzl's tool_test_env), as for any system tool
        SystemToolInfo(tool = ctx.attrs.controller, version = version),
        SlurmToolchainInfo(
            sbatch = ctx.attrs.sbatch,
            srun = ctx.attrs.srun,
            version = version,
        ),
    ]

slurm_toolchain = rule(
    impl = _slurm_toolchain_impl,
    attrs = {
        "controller": attrs.string(default = "slurmctld"),
        "sbatch": attrs.string(default = "sbatch"),
        "srun": attrs.string(default = "srun"),
        "_probe": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//rules/tools/action:action",
        )),
    },
    is_toolchain_rule = True,
    doc = "Slurm: `controller` identifies the installation, `sbatch` and `srun` are its " +
          "client commands (names on PATH).",
)
