"""The AuroraFlow toolchain: the kernel description (hw/aurora_flow/kernel.toml, the one
source of the kernel's parameters, registers and link physics) and its one reader,
`aurora-flow-desc` (hw/aurora_flow/desc), which packages a kernel for Vivado. toolchains/BUCK
names both; the rules reach them only through this provider.
"""

AuroraFlowToolchainInfo = provider(
    doc = "`desc_tool`: RunInfo of aurora-flow-desc; `kernel_description`: Artifact, " +
          "kernel.toml (its [flow_control] sizing rule feeds every link config).",
    fields = {
        "desc_tool": provider_field(RunInfo),
        "kernel_description": provider_field(Artifact),
    },
)

def _aurora_flow_toolchain_impl(ctx: AnalysisContext) -> list[Provider]:
    return [
        DefaultInfo(),
        AuroraFlowToolchainInfo(
            desc_tool = ctx.attrs.desc_tool[RunInfo],
            kernel_description = ctx.attrs.kernel_description,
        ),
    ]

aurora_flow_toolchain = rule(
    impl = _aurora_flow_toolchain_impl,
    attrs = {
        "desc_tool": attrs.exec_dep(providers = [RunInfo], doc = "aurora-flow-desc"),
        "kernel_description": attrs.source(doc = "kernel.toml"),
    },
    is_toolchain_rule = True,
    doc = "The AuroraFlow kernel description and its reader.",
)
