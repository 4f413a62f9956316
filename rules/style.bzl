# Code style as tests: rustfmt, clippy `-D warnings`, buildifier, shellcheck and ruff, each
# over the files of the package that declares it, so a formatting slip fails
# `./forge test //...` (and `buck2 test //...`) like any other test.
#
# The shape follows aspect-build/rules_lint (one `*_test` per tool over a set of sources);
# buck2 has no aspects, so every package declares its own checks with `style_checks()`,
# which globs the files that package owns (a glob never reaches into a subpackage).
# Each tool comes from its toolchain (toolchains//:rustfmt, :clippy, :buildifier,
# :shellcheck, :ruff) and the tool's probed version is among the test's inputs. The test
# command is rules/tools/style_check, which runs the tool from the project root (file
# arguments are project-relative) and names the target and the fix when the tool complains.
# `expect_rejection` turns a check around for a fixture with a deliberate slip: the test
# passes only if the tool rejects the files and its output contains each given text.

load("//rules/toolchains:cargo.bzl", "CargoToolchainInfo")
load("//rules/toolchains:python.bzl", "PythonToolchainInfo")
load("//rules/toolchains:system.bzl", "SystemToolInfo")
load(":cargo.bzl", "CARGO_ACTION_WEIGHT", "CargoWorkspaceInfo")

def _style_test(ctx: AnalysisContext, check: str, fix: str, tool: list, inputs: list, replay = None) -> list[Provider]:
    """The test running `tool` under style-check; with `replay` (a record a build action
    wrote with `style-check --record`) it judges that recorded run instead."""
    command = cmd_args(
        ctx.attrs._style_check[RunInfo],
        "--check",
        check,
        "--target",
        str(ctx.label.raw_target()),
        "--fix",
        fix,
    )
    for text in ctx.attrs.expect_rejection:
        command.add("--expect-rejection", text)
    if replay:
        command.add("--replay", replay)
    else:
        command.add("--")
        command.add(tool)
    return [
        DefaultInfo(default_outputs = inputs),
        ExternalRunnerTestInfo(
            type = "style",
            command = [cmd_args(command, hidden = inputs)],
            labels = ctx.attrs.labels + ["style"],
        ),
    ]

_COMMON_ATTRS = {
    "expect_rejection": attrs.list(attrs.string(), default = []),
    "labels": attrs.list(attrs.string(), default = []),
    "_style_check": attrs.default_only(attrs.exec_dep(
        providers = [RunInfo],
        default = "root//rules/tools/style_check:style-check",
    )),
}

_EXPECT_DOC = " `expect_rejection`: for a fixture with a deliberate slip, texts the tool's " + \
              "output must contain when it rejects the files (the test fails if it accepts them)."

def _rustfmt_test_impl(ctx: AnalysisContext) -> list[Provider]:
    rustfmt = ctx.attrs._rustfmt[SystemToolInfo]
    return _style_test(
        ctx,
        "rustfmt",
        "run `cargo fmt --all` (or `rustfmt --edition {} FILE` on each file above)".format(ctx.attrs.edition),
        [rustfmt.tool, "--check", "--edition", ctx.attrs.edition] + ctx.attrs.srcs,
        ctx.attrs.srcs + [rustfmt.version],
    )

rustfmt_test = rule(
    impl = _rustfmt_test_impl,
    attrs = _COMMON_ATTRS | {
        "edition": attrs.string(default = "2021"),
        "srcs": attrs.list(attrs.source()),
        "_rustfmt": attrs.default_only(attrs.toolchain_dep(
            providers = [SystemToolInfo],
            default = "toolchains//:rustfmt",
        )),
    },
    doc = "`rustfmt --check --edition <edition>` over `srcs`." + _EXPECT_DOC,
)

def _clippy_test_impl(ctx: AnalysisContext) -> list[Provider]:
    cargo = ctx.attrs._cargo_toolchain[CargoToolchainInfo]
    clippy = ctx.attrs._clippy[SystemToolInfo]
    workspace = ctx.attrs.workspace[CargoWorkspaceInfo]
    package = ctx.attrs.package
    inputs = workspace.srcs + [cargo.version, clippy.version]

    # The profile and target directory of the graph's cargo actions (toolchains//:cargo): build
    # scripts, proc macros and their outputs are shared with `cargo build`, and a second run
    # over unchanged sources only re-checks fingerprints. clippy runs in a build action that
    # records its verdict (`style-check --record`), scheduled like the other cargo actions:
    # one cargo at a time, all job slots (CARGO_ACTION_WEIGHT), so no clippy holds cargo's
    # lock on the target dir while a cargo action sits on every slot waiting for it; and
    # cached like them. The test judges the record (docs/benchmarks.md, "Where the suite's
    # time goes").
    record = ctx.actions.declare_output("clippy.record")
    ctx.actions.run(
        cmd_args(
            ctx.attrs._style_check[RunInfo],
            "--record",
            record.as_output(),
            "--",
            cargo.cargo,
            "clippy",
            "--locked",
            "--profile",
            cargo.profile,
            "--target-dir",
            cargo.target_dir,
            "--manifest-path",
            workspace.manifest,
            "--package",
            package,
            "--all-targets",
            # lint this package only: each workspace crate has its own clippy test
            "--no-deps",
            "--",
            "-D",
            "warnings",
            # no function over 150 lines (clippy.toml's threshold; docs/style.md)
            "-W",
            "clippy::too_many_lines",
            hidden = inputs,
        ),
        category = "cargo_clippy",
        # the shared target directory lives on this machine only
        local_only = True,
        allow_cache_upload = True,
        weight = CARGO_ACTION_WEIGHT,
    )
    return _style_test(
        ctx,
        "clippy",
        "fix the warnings above; `cargo clippy -p {} --all-targets -- -D warnings -W clippy::too_many_lines` shows them".format(package),
        [],
        inputs + [record],
        replay = record,
    )

clippy_test = rule(
    impl = _clippy_test_impl,
    attrs = _COMMON_ATTRS | {
        "package": attrs.string(),
        "workspace": attrs.dep(providers = [CargoWorkspaceInfo], default = "root//:cargo_workspace"),
        "_cargo_toolchain": attrs.default_only(attrs.toolchain_dep(
            providers = [CargoToolchainInfo],
            default = "toolchains//:cargo",
        )),
        "_clippy": attrs.default_only(attrs.toolchain_dep(
            providers = [SystemToolInfo],
            default = "toolchains//:clippy",
        )),
    },
    doc = "`cargo clippy --all-targets --no-deps -- -D warnings` of crate `package` of " +
          "`workspace`, with the cargo toolchain's profile and target directory, run by a " +
          "build action (`cargo_clippy`) that records the result for the test to judge." + _EXPECT_DOC,
)

def _buildifier_test_impl(ctx: AnalysisContext) -> list[Provider]:
    buildifier = ctx.attrs._buildifier[SystemToolInfo]
    return _style_test(
        ctx,
        "buildifier",
        "run `{} -lint=off FILE` on each file above".format(buildifier.tool),
        [buildifier.tool, "-mode=check", "-lint=off"] + ctx.attrs.srcs,
        ctx.attrs.srcs + [buildifier.version],
    )

buildifier_test = rule(
    impl = _buildifier_test_impl,
    attrs = _COMMON_ATTRS | {
        "srcs": attrs.list(attrs.source()),
        "_buildifier": attrs.default_only(attrs.toolchain_dep(
            providers = [SystemToolInfo],
            default = "toolchains//:buildifier",
        )),
    },
    doc = "`buildifier -mode=check -lint=off` (formatting only) over `srcs`." + _EXPECT_DOC,
)

def _shellcheck_test_impl(ctx: AnalysisContext) -> list[Provider]:
    shellcheck = ctx.attrs._shellcheck[SystemToolInfo]
    return _style_test(
        ctx,
        "shellcheck",
        "change the lines above, or silence one finding with `# shellcheck disable=SCnnnn # why`",
        [shellcheck.tool] + ctx.attrs.srcs,
        ctx.attrs.srcs + [shellcheck.version],
    )

shellcheck_test = rule(
    impl = _shellcheck_test_impl,
    attrs = _COMMON_ATTRS | {
        "srcs": attrs.list(attrs.source()),
        "_shellcheck": attrs.default_only(attrs.toolchain_dep(
            providers = [SystemToolInfo],
            default = "toolchains//:shellcheck",
        )),
    },
    doc = "`shellcheck` (all severities) over the shell scripts `srcs`." + _EXPECT_DOC,
)

def _ruff_test_impl(ctx: AnalysisContext) -> list[Provider]:
    python = ctx.attrs._ruff[PythonToolchainInfo]
    return _style_test(
        ctx,
        "ruff",
        "change the lines above (`ruff check --fix FILE` fixes the safe ones), or silence one " +
        "line with `# noqa: CODE`",
        # --isolated: exactly the rules selected here, whatever config files lie around;
        # --no-cache: the test writes nothing into the source tree.
        [
            python.interpreter,
            "-m",
            "ruff",
            "check",
            "--isolated",
            "--no-cache",
            "--select",
            ",".join(ctx.attrs.select),
        ] + ctx.attrs.srcs,
        ctx.attrs.srcs + [python.version],
    )

ruff_test = rule(
    impl = _ruff_test_impl,
    attrs = _COMMON_ATTRS | {
        # pyflakes (F) and pycodestyle's error classes (E4 imports, E7 statements, E9 syntax):
        # ruff's long-standing default set, the checks flake8 runs by default minus layout.
        "select": attrs.list(attrs.string(), default = ["E4", "E7", "E9", "F"]),
        "srcs": attrs.list(attrs.source()),
        "_ruff": attrs.default_only(attrs.toolchain_dep(
            providers = [PythonToolchainInfo],
            default = "toolchains//:ruff",
        )),
    },
    doc = "`ruff check --select <select>` over the Python files `srcs`." + _EXPECT_DOC,
)

def style_checks(cargo_package = None, dirs = None, exclude = [], shell_scripts = [], rust_edition = "2021"):
    """The style tests of the calling package, over the files it owns: `:style_rustfmt`
    (*.rs), `:style_clippy` (when `cargo_package` names the package's crate),
    `:style_buildifier` (BUCK, *.bzl), `:style_shellcheck` (*.sh and `shell_scripts`),
    `:style_ruff` (*.py). A test is declared only when it has files. `dirs` limits the search to those subdirectories (plus the package's own top
    level), for a package whose tree also holds tool output; `exclude` drops glob patterns;
    `rust_edition` is the edition rustfmt parses the package's Rust with."""

    def owned(patterns):
        if dirs == None:
            include = ["**/" + p for p in patterns]
        else:
            include = patterns + [d + "/**/" + p for d in dirs for p in patterns]
        return glob(include, exclude = exclude)

    rust = owned(["*.rs"])
    if rust:
        rustfmt_test(name = "style_rustfmt", edition = rust_edition, srcs = rust)
    if cargo_package:
        clippy_test(name = "style_clippy", package = cargo_package)
    starlark = owned(["BUCK", "*.bzl"])
    if starlark:
        buildifier_test(name = "style_buildifier", srcs = starlark)
    shell = owned(["*.sh"]) + shell_scripts
    if shell:
        shellcheck_test(name = "style_shellcheck", srcs = shell)
    python = owned(["*.py"])
    if python:
        ruff_test(name = "style_ruff", srcs = python)
