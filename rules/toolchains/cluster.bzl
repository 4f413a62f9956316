"""The clusters: the Slurm sites the project writes jobs for, one file each
(`toolchains/clusters/<name>.toml`, its keys in toolchains/clusters/README.md), read by
deploy-tool and re-workers through their one reader (rules/tools/cluster). A deployment
writes a job script and a bundle per cluster; `default` is the one its `[job_script]` and
`[bundle]` are. toolchains/BUCK, the one composition root, names the files; the rules reach
them only through this provider.
"""

ClusterToolchainInfo = provider(
    doc = "`clusters`: dict name -> Artifact, each cluster's file (name = the file's stem); " +
          "`default`: str, the cluster of a deployment's `[job_script]` and `[bundle]`.",
    fields = {
        "clusters": provider_field(dict),
        "default": provider_field(str),
    },
)

def _cluster_toolchain_impl(ctx: AnalysisContext) -> list[Provider]:
    if ctx.attrs.default not in ctx.attrs.clusters:
        fail("[deploy] cluster = {}: no such cluster file; the clusters: {} (toolchains/clusters/<name>.toml)".format(
            ctx.attrs.default,
            ", ".join(sorted(ctx.attrs.clusters)),
        ))
    return [
        DefaultInfo(default_outputs = [ctx.attrs.clusters[n] for n in sorted(ctx.attrs.clusters)]),
        ClusterToolchainInfo(clusters = ctx.attrs.clusters, default = ctx.attrs.default),
    ]

cluster_toolchain = rule(
    impl = _cluster_toolchain_impl,
    attrs = {
        "clusters": attrs.dict(attrs.string(), attrs.source(), doc = "name -> cluster file"),
        "default": attrs.string(doc = "the cluster of `[job_script]` and `[bundle]`"),
    },
    is_toolchain_rule = True,
    doc = "The Slurm sites' cluster files and which one a deployment's job script is for.",
)
