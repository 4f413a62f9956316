"""Rust through the build graph: the Cargo workspace as a set of declared inputs, binaries of
workspace crates, and each crate's tests.

cargo compiles inside the action with a target directory shared by all cargo actions
(`CargoToolchainInfo.target_dir`), so a rebuild after an edit is as incremental as plain
cargo. That directory is state outside the action graph: the graph decides WHEN cargo runs
(any workspace source, Cargo.lock or the toolchain version changed), cargo decides WHAT to
recompile. The declared outputs are copies taken out of it, so they are cacheable.

`cargo_workspace` has no actions. `cargo_binary` runs one action `cargo_build`
(`cargo build --locked --profile <profile> -p <package> --bin <bin>`; every workspace file and
the toolchain version are its inputs) and outputs a copy of the binary, with `RunInfo` (so
`./forge run //engine/forge:forge -- --help` works). `cargo_test` runs one action
`cargo_test_build` (`cargo test --locked --no-run --message-format=json`, the crate under test
at its `opt_level`) that collects the test executables (unit tests of lib and bins,
integration tests) into `tests/`; its `ExternalRunnerTestInfo(type = "cargo")` runs each from the crate's directory with
`CARGO_MANIFEST_DIR` set, as `cargo test` does. Doc-tests are not run.

`cargo_binary` and `cargo_test` run cargo through the project's helper (`action cargo`,
rules/tools/action), which is itself a crate: `cargo_bootstrap_binary` builds it with nothing
but the toolchain's cargo, one action `cargo_bootstrap` (`cargo install --locked --offline
--no-track --path <crate> --bin <bin> --root <out> --target-dir <target_dir> --profile
<profile>`: no shell and no helper; the same cargo unit as `cargo build`, so it shares the
target directory's artifacts). Its cargo, profile and target dir come from
toolchains//:cargo_bootstrap, which has no helper and so no dependency on what it builds;
toolchains//:cargo takes the same three from it, probes `rustc -vV` and `cargo -V` with the
bootstrapped helper and hands that version file to every other cargo action. The bootstrap
action is the one cargo action whose key does not hold the toolchain's version (the probe
needs the binary it builds); as with the probes themselves, run `./forge clean` once after
upgrading Rust (docs/limits.md).

The target directory is shared by all cargo actions and by `./forge`'s own engine build
(`target/`, a `[forge] sandbox_passthrough`), with the same profile (`release`) and cargo unit,
so a fresh clone compiles each crate once and the graph's `//engine/forge:forge` finds it
fresh. Actions run without network: `./forge` runs `cargo fetch` whenever `Cargo.lock`
changes. `//:bootstrap_test` fails if the wrapper and `toolchains//:cargo_bootstrap` (whose
values `toolchains//:cargo` takes) stop agreeing on the target dir or profile.
"""

load("//rules/toolchains:cargo.bzl", "CargoBootstrapToolchainInfo", "CargoToolchainInfo")
load("//rules/toolchains:verilator.bzl", "VerilatorToolchainInfo")

# cargo runs one build at a time in the shared target directory (it locks it) and spreads
# that build over every core itself, so a cargo action takes all of the build's job slots
# instead of holding one while it waits for another cargo's lock. A weight above the job
# count takes them all (buck2 0676d75903 and forge both cap it).
CARGO_ACTION_WEIGHT = 1000

CargoWorkspaceInfo = provider(
    doc = "A Cargo workspace as action inputs. `manifest`: Artifact, the root Cargo.toml; " +
          "`srcs`: list[Artifact], the root manifest, Cargo.lock and every member's manifest " +
          "and sources (cargo loads all members even to build one).",
    fields = {
        "manifest": provider_field(Artifact),
        "srcs": provider_field(list),
    },
)

def _cargo_workspace_impl(ctx: AnalysisContext) -> list[Provider]:
    srcs = [ctx.attrs.manifest, ctx.attrs.lockfile]
    if ctx.attrs.clippy_config:
        srcs.append(ctx.attrs.clippy_config)
    for member in ctx.attrs.members:
        srcs.extend(member[DefaultInfo].default_outputs)
    return [
        DefaultInfo(other_outputs = srcs),
        CargoWorkspaceInfo(manifest = ctx.attrs.manifest, srcs = srcs),
    ]

cargo_workspace = rule(
    impl = _cargo_workspace_impl,
    attrs = {
        "clippy_config": attrs.option(attrs.source(), default = None, doc = "clippy.toml: the lint thresholds of every crate's clippy"),
        "lockfile": attrs.source(),
        "manifest": attrs.source(),
        "members": attrs.list(attrs.dep(), default = []),
    },
    doc = "The Cargo workspace: root `manifest`, `lockfile`, and one sources target per " +
          "member crate (each crate's BUCK exports its files, since glob() stops at packages).",
)

def _cargo_action(ctx: AnalysisContext, toolchain, verb: str, args: list) -> cmd_args:
    """The toolchain's `action VERB` on crate `package` with its cargo, profile and target
    directory, then `args`; the workspace's sources and the toolchain's version are inputs."""
    return cmd_args(
        toolchain.action,
        verb,
        "--cargo",
        toolchain.cargo,
        "--profile",
        toolchain.profile,
        "--target-dir",
        toolchain.target_dir,
        "--package",
        ctx.attrs.package,
        args,
        hidden = ctx.attrs.workspace[CargoWorkspaceInfo].srcs + [toolchain.version],
    )

def _run_cargo(ctx: AnalysisContext, command: cmd_args, category: str):
    ctx.actions.run(
        command,
        category = category,
        # The shared target directory lives on this machine only.
        local_only = True,
        allow_cache_upload = True,
        weight = CARGO_ACTION_WEIGHT,
    )

def _cargo_binary_impl(ctx: AnalysisContext) -> list[Provider]:
    toolchain = ctx.attrs._cargo_toolchain[CargoToolchainInfo]
    binary = ctx.attrs.bin or ctx.label.name
    out = ctx.actions.declare_output(binary)
    _run_cargo(
        ctx,
        _cargo_action(ctx, toolchain, "build", ["--bin", binary, "--out", out.as_output()]),
        "cargo_build",
    )
    return [
        DefaultInfo(default_output = out),
        RunInfo(args = cmd_args(out)),
    ]

cargo_binary = rule(
    impl = _cargo_binary_impl,
    attrs = {
        "bin": attrs.option(attrs.string(), default = None),
        "package": attrs.string(),
        "workspace": attrs.dep(providers = [CargoWorkspaceInfo], default = "root//:cargo_workspace"),
        "_cargo_toolchain": attrs.default_only(attrs.toolchain_dep(
            providers = [CargoToolchainInfo],
            default = "toolchains//:cargo",
        )),
    },
    doc = "Binary `bin` (default: the target name) of workspace crate `package`, built by " +
          "`cargo build --locked`. Runnable with `run`.",
)

def _cargo_bootstrap_binary_impl(ctx: AnalysisContext) -> list[Provider]:
    toolchain = ctx.attrs._cargo_toolchain[CargoBootstrapToolchainInfo]
    binary = ctx.attrs.bin or ctx.label.name
    root = ctx.actions.declare_output("install", dir = True)
    _run_cargo(
        ctx,
        cmd_args(
            toolchain.cargo,
            "install",
            # Cargo.lock as it is, no network (the wrapper's `cargo fetch` filled the cache),
            # and no install records (`.crates.toml` would name the checkout's path)
            "--locked",
            "--offline",
            "--no-track",
            "--path",
            ctx.label.package,
            "--bin",
            binary,
            "--root",
            root.as_output(),
            "--target-dir",
            toolchain.target_dir,
            "--profile",
            toolchain.profile,
            hidden = ctx.attrs.workspace[CargoWorkspaceInfo].srcs,
        ),
        "cargo_bootstrap",
    )
    exe = cmd_args(root, format = "{}/bin/" + binary)
    return [
        DefaultInfo(default_output = root),
        RunInfo(args = exe),
    ]

cargo_bootstrap_binary = rule(
    impl = _cargo_bootstrap_binary_impl,
    attrs = {
        "bin": attrs.option(attrs.string(), default = None),
        "workspace": attrs.dep(providers = [CargoWorkspaceInfo], default = "root//:cargo_workspace"),
        "_cargo_toolchain": attrs.default_only(attrs.toolchain_dep(
            providers = [CargoBootstrapToolchainInfo],
            default = "toolchains//:cargo_bootstrap",
        )),
    },
    doc = "Binary `bin` (default: the target name) of the workspace crate in this package's " +
          "directory, built by the toolchain's cargo alone (`cargo install --locked --offline " +
          "--no-track --path`, no helper): for the helpers `cargo_binary` itself runs " +
          "(rules/tools/action). Output: `install/bin/<bin>`; runnable with `run`.",
)

def _cargo_test_impl(ctx: AnalysisContext) -> list[Provider]:
    toolchain = ctx.attrs._cargo_toolchain[CargoToolchainInfo]
    tests = ctx.actions.declare_output("tests", dir = True)
    _run_cargo(
        ctx,
        _cargo_action(ctx, toolchain, "test-build", ["--out-dir", tests.as_output(), "--opt-level", ctx.attrs.opt_level]),
        "cargo_test_build",
    )
    crate_dir = ctx.label.package or "."
    tools = []
    env = dict(ctx.attrs.env)
    if ctx.attrs.verilator:
        verilator = ctx.attrs.verilator[VerilatorToolchainInfo]
        env["VERILATOR"] = verilator.verilator
        tools.append(verilator.version)
    command = cmd_args(
        toolchain.test_runner,
        tests,
        crate_dir,
        ctx.attrs.args,
        hidden = ctx.attrs.workspace[CargoWorkspaceInfo].srcs + ctx.attrs.data + list(ctx.attrs.env_files.values()) + tools,
    )
    for name, artifact in ctx.attrs.env_files.items():
        env[name] = artifact
    return [
        DefaultInfo(default_output = tests),
        ExternalRunnerTestInfo(
            type = "cargo",
            command = [command],
            env = env,
            labels = ctx.attrs.labels,
        ),
    ]

cargo_test = rule(
    impl = _cargo_test_impl,
    attrs = {
        "args": attrs.list(attrs.string(), default = []),
        "data": attrs.list(attrs.source(), default = []),
        "env": attrs.dict(attrs.string(), attrs.string(), default = {}),
        "env_files": attrs.dict(attrs.string(), attrs.source(), default = {}),
        "labels": attrs.list(attrs.string(), default = []),
        "opt_level": attrs.enum(["0", "1", "2", "3", "s", "z"], default = "0"),
        "package": attrs.string(),
        "verilator": attrs.option(attrs.toolchain_dep(providers = [VerilatorToolchainInfo]), default = None),
        "workspace": attrs.dep(providers = [CargoWorkspaceInfo], default = "root//:cargo_workspace"),
        "_cargo_toolchain": attrs.default_only(attrs.toolchain_dep(
            providers = [CargoToolchainInfo],
            default = "toolchains//:cargo",
        )),
    },
    doc = "The unit and integration tests of workspace crate `package`: built by " +
          "`cargo test --no-run` in an action, run from the crate's directory; fails if any " +
          "test executable fails. `args` go to every test executable, `data` are extra files " +
          "the tests read, `env_files` names built files in the env (project-relative paths), " +
          "`verilator = \"toolchains//:verilator\"` gives the tests that toolchain's command in " +
          "`VERILATOR` (its version an input). `opt_level` (default `\"0\"`, as `cargo test`'s " +
          "own test profile) compiles the crate under test alone at that level (a `--config` " +
          "profile override): the crates it depends on keep the toolchain's profile, so their " +
          "units are the ones the binaries' builds made, and the test build does not spend " +
          "minutes optimising code a test runs once; a crate whose tests are compute-bound " +
          "sets `\"3\"`.",
)
