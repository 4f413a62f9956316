"""The deployment toolchain: the deployment compiler (`deploy-tool`, deploy/tool) that turns a
description into partitioner inputs, link configs, job scripts and reports, and the packer
of simulation xclbins (`xclbin-pack`, host/xclbin). toolchains/BUCK, the one composition
root, names the binaries; the rules reach them only through this provider.
"""

DeployToolchainInfo = provider(
    doc = "`compiler`: RunInfo of deploy-tool; `xclbin_pack`: RunInfo of xclbin-pack.",
    fields = {
        "compiler": provider_field(RunInfo),
        "xclbin_pack": provider_field(RunInfo),
    },
)

def _deploy_toolchain_impl(ctx: AnalysisContext) -> list[Provider]:
    return [
        DefaultInfo(),
        DeployToolchainInfo(
            compiler = ctx.attrs.compiler[RunInfo],
            xclbin_pack = ctx.attrs.xclbin_pack[RunInfo],
        ),
    ]

deploy_toolchain = rule(
    impl = _deploy_toolchain_impl,
    attrs = {
        "compiler": attrs.exec_dep(providers = [RunInfo], doc = "deploy-tool"),
        "xclbin_pack": attrs.exec_dep(providers = [RunInfo], doc = "xclbin-pack"),
    },
    is_toolchain_rule = True,
    doc = "The deployment compiler and the xclbin packer.",
)
