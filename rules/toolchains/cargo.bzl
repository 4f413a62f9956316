"""The Rust toolchain: `cargo` and `rustc` from PATH (rustup or the distribution's packages),
the cargo profile, and the shared cargo target directory that makes rebuilds incremental.

Two toolchains: `cargo_bootstrap_toolchain` (toolchains//:cargo_bootstrap) names cargo, the
profile and the target dir and nothing else, for the bootstrap build of the helpers
(rules/cargo.bzl, `cargo_bootstrap_binary`); `system_cargo_toolchain` (toolchains//:cargo)
takes those from it and adds the helpers and the probed version.

The defaults are the `./forge` wrapper's engine build (tools/bootstrap/bootstrap.sh:
`cargo build --release` into `target/`), so the graph's cargo actions find every crate the
engine build compiled and a fresh clone compiles each crate once.
tools/bootstrap/test_bootstrap.sh checks the two agree.
"""

load(":system.bzl", "probe_tool_version")

CargoBootstrapToolchainInfo = provider(
    doc = "cargo without any helper of the project: what rules/cargo.bzl's " +
          "`cargo_bootstrap_binary` runs to build the helpers themselves. `cargo`: str; " +
          "`profile`: str, the cargo profile of every cargo action; `target_dir`: str, the " +
          "project-relative CARGO_TARGET_DIR shared by all cargo actions.",
    fields = {
        "cargo": provider_field(str),
        "profile": provider_field(str),
        "target_dir": provider_field(str),
    },
)

def _cargo_bootstrap_toolchain_impl(ctx: AnalysisContext) -> list[Provider]:
    return [
        DefaultInfo(),
        CargoBootstrapToolchainInfo(
            cargo = ctx.attrs.cargo,
            profile = ctx.attrs.profile,
            target_dir = ctx.attrs.target_dir,
        ),
    ]

# The one place cargo, the profile and the target dir are named: `system_cargo_toolchain`
# takes them from here. It cannot be the other way round, since that toolchain's helpers (and
# its version probe) are built by `cargo_bootstrap_binary`, which needs cargo first.
cargo_bootstrap_toolchain = rule(
    impl = _cargo_bootstrap_toolchain_impl,
    attrs = {
        "cargo": attrs.string(default = "cargo"),
        "profile": attrs.string(default = "release"),
        "target_dir": attrs.string(default = "target"),
    },
    is_toolchain_rule = True,
    doc = "cargo from PATH, its profile and shared target dir, for the bootstrap build of " +
          "the project's helpers. `target_dir` must also be listed in " +
          "`[forge] sandbox_passthrough`.",
)

CargoToolchainInfo = provider(
    doc = "How rules/cargo.bzl runs cargo. `cargo`: str; `profile`: str, cargo profile for " +
          "binaries and tests alike (one profile = one compile of the dependencies); " +
          "`target_dir`: str, project-relative CARGO_TARGET_DIR shared by all cargo actions; " +
          "`version`: Artifact, `rustc -vV` and `cargo -V` output (an input of every cargo " +
          "action); `action`: RunInfo, the helper that runs cargo inside an action (`action " +
          "cargo`); `test_runner`: RunInfo, the helper that runs collected test executables " +
          "(`action run-tests`).",
    fields = {
        "action": provider_field(RunInfo),
        "cargo": provider_field(str),
        "profile": provider_field(str),
        "target_dir": provider_field(str),
        "test_runner": provider_field(RunInfo),
        "version": provider_field(Artifact),
    },
)

def _system_cargo_toolchain_impl(ctx: AnalysisContext) -> list[Provider]:
    bootstrap = ctx.attrs._bootstrap[CargoBootstrapToolchainInfo]
    version = probe_tool_version(ctx, ctx.attrs._action, [
        [ctx.attrs.rustc, "-vV"],
        [bootstrap.cargo, "-V"],
    ])
    tool = ctx.attrs._action[RunInfo]
    return [
        DefaultInfo(default_output = version),
        CargoToolchainInfo(
            action = RunInfo(args = cmd_args(tool, "cargo")),
            cargo = bootstrap.cargo,
            profile = bootstrap.profile,
            target_dir = bootstrap.target_dir,
            test_runner = RunInfo(args = cmd_args(tool, "run-tests")),
            version = version,
        ),
    ]

system_cargo_toolchain = rule(
    impl = _system_cargo_toolchain_impl,
    attrs = {
        "rustc": attrs.string(default = "rustc"),
        # the helpers (rules/tools/action), built by `cargo_bootstrap_binary` with the cargo
        # of toolchains//:cargo_bootstrap
        "_action": attrs.default_only(attrs.exec_dep(
            providers = [RunInfo],
            default = "root//rules/tools/action:action",
        )),
        "_bootstrap": attrs.default_only(attrs.toolchain_dep(
            providers = [CargoBootstrapToolchainInfo],
            default = "toolchains//:cargo_bootstrap",
        )),
    },
    is_toolchain_rule = True,
    doc = "cargo (with the profile and target dir of toolchains//:cargo_bootstrap) and rustc " +
          "from PATH, with the project's helpers that run them inside actions.",
)
