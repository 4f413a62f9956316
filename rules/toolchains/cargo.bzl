"""The Rust toolchain: `cargo` and `rustc` from PATH (rustup or the distribution's packages),
the cargo profile, and the shared cargo target directory that makes rebuilds incremental.

The defaults are the `./forge` wrapper's engine build (tools/bootstrap/bootstrap.sh:
`cargo build --release` into `target/`), so the graph's cargo actions find every crate the
engine build compiled and a fresh clone compiles each crate once.
tools/bootstrap/test_bootstrap.sh checks the two agree.
"""

load(":system.bzl", "probe_tool_version")

CargoToolchainInfo = provider(
    doc = "How rules/cargo.bzl runs cargo. `cargo`: str; `profile`: str, cargo profile for " +
          "binaries and tests alike (one profile = one compile of the dependencies); " +
          "`target_dir`: str, project-relative CARGO_TARGET_DIR shared by all cargo actions; " +
          "`version`: Artifact, `rustc -vV` and `cargo -V` output (an input of every cargo " +
          "action); `action`: RunInfo, the helper that runs cargo inside an action; " +
          "`test_runner`: RunInfo, the helper that runs collected test executables.",
    fields = ["action", "cargo", "profile", "target_dir", "test_runner", "version"],
)

def _system_cargo_toolchain_impl(ctx: AnalysisContext) -> list[Provider]:
    version = probe_tool_version(ctx, ctx.attrs._probe, [
        [ctx.attrs.rustc, "-vV"],
        [ctx.attrs.cargo, "-V"],
    ])
    return [
        DefaultInfo(default_output = version),
        CargoToolchainInfo(
            action = ctx.attrs._action[RunInfo],
            cargo = ctx.attrs.cargo,
            profile = ctx.attrs.profile,
            target_dir = ctx.attrs.target_dir,
            test_runner = ctx.attrs._test_runner[RunInfo],
            version = version,
        ),
    ]

system_cargo_toolchain = rule(
    impl = _system_cargo_toolchain_impl,
    attrs = {
        "cargo": attrs.string(default = "cargo"),
        "profile": attrs.string(default = "release"),
        "rustc": attrs.string(default = "rustc"),
        "target_dir": attrs.string(default = "target"),
        "_action": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//rules/tools/cargo:cargo_action",
        )),
        "_probe": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//rules/tools/toolchain:probe_version",
        )),
        "_test_runner": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//rules/tools/cargo:run_tests",
        )),
    },
    is_toolchain_rule = True,
    doc = "cargo and rustc from PATH. `target_dir` must also be listed in " +
          "`[forge] sandbox_passthrough`.",
)
