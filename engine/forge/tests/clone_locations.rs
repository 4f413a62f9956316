//! A checkout builds and tests the same wherever it lives: under `/tmp` (which every sandboxed
//! action gets fresh), under a path with spaces, and reached through a symlinked directory.
//! Each scratch project has a `.venv` that is a symlink into another checkout whose own
//! `.venv` is a symlink to the real environment (as a copy of a clone links the clone's, which
//! links the main checkout's), declared as a `[forge] sandbox_passthrough` like this project's.
//!
//! The reference for every action's output is computed here from the files the test wrote,
//! not from forge: the action reads a declared source, runs a tool of the environment whose
//! `#!` line names the environment's real (canonical) path, and writes a stamp into the
//! environment, which must land in the real directory.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BUCK: &str = r#"load("//:defs.bzl", "env_test", "uses_env")

uses_env(
    name = "built",
    src = "data/in.txt",
)

env_test(
    name = "tested",
    script = "check.sh",
)
"#;

const DEFS: &str = r#"def _uses_env_impl(ctx):
    out = ctx.actions.declare_output("out.txt")
    script = "{ cat \"$1\" && .venv/bin/tool && .venv/bin/interp-tool; } > \"$2\" && echo built > .venv/stamp-$3"
    ctx.actions.run(
        cmd_args("/bin/sh", "-c", script, "--", ctx.attrs.src, out.as_output(), ctx.attrs.name),
        category = "uses_env",
    )
    return [DefaultInfo(default_output = out)]

uses_env = rule(impl = _uses_env_impl, attrs = {"src": attrs.source()})

def _env_test_impl(ctx):
    return [
        DefaultInfo(),
        ExternalRunnerTestInfo(type = "custom", command = ["/bin/sh", ctx.attrs.script]),
    ]

env_test = rule(impl = _env_test_impl, attrs = {"script": attrs.source()})
"#;

const TOOL_OUTPUT: &str = "tool from the environment";
const INTERP_OUTPUT: &str = "interpreter from the environment";

/// The real environment at `venv`: `bin/tool` (a plain script) and `bin/interp-tool`, whose
/// `#!` line names `bin/interp` by the environment's canonical path, as a venv's scripts name
/// its python.
fn make_environment(venv: &Path) {
    let bin = venv.join("bin");
    fs::create_dir_all(&bin).unwrap();
    let canonical = venv.canonicalize().unwrap();
    let exe = |p: PathBuf, text: String| {
        fs::write(&p, text).unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    };
    exe(
        bin.join("tool"),
        format!("#!/bin/sh\necho '{TOOL_OUTPUT}'\n"),
    );
    exe(
        bin.join("interp"),
        format!("#!/bin/sh\necho '{INTERP_OUTPUT}'\n"),
    );
    // Run by the environment's canonical path, as a venv's scripts name its python: the
    // kernel (`#!`) or the shell opens that path itself, so it must exist in the sandbox.
    // (`#!` takes no quoting, so under a path with spaces the shell runs it, quoted.)
    let interp = canonical.join("bin/interp");
    let script = if interp.to_string_lossy().contains(' ') {
        format!("#!/bin/sh\nexec '{}'\n", interp.display())
    } else {
        format!("#!{}\n", interp.display())
    };
    exe(bin.join("interp-tool"), script);
}

/// A project at `root` whose `.venv` links `via` (another checkout's `.venv`, itself a link to
/// `venv`).
fn make_project(root: &Path, via: &Path, venv: &Path) {
    fs::create_dir_all(root.join("prelude")).unwrap();
    fs::create_dir_all(root.join("data")).unwrap();
    fs::write(
        root.join(".buckconfig"),
        "[cells]\n  root = .\n  prelude = prelude\n\n[buildfile]\n  name = BUCK\n\n\
         [project]\n  ignore = .venv\n\n[forge]\n  sandbox = bwrap\n  sandbox_passthrough = .venv\n",
    )
    .unwrap();
    fs::write(root.join(".buckroot"), "").unwrap();
    fs::write(root.join("prelude/prelude.bzl"), "").unwrap();
    fs::write(root.join("defs.bzl"), DEFS).unwrap();
    fs::write(root.join("BUCK"), BUCK).unwrap();
    fs::write(root.join("data/in.txt"), "declared input\n").unwrap();
    fs::write(
        root.join("check.sh"),
        format!(
            "set -e\n[ \"$(.venv/bin/tool)\" = '{TOOL_OUTPUT}' ]\n\
             [ \"$(.venv/bin/interp-tool)\" = '{INTERP_OUTPUT}' ]\necho test-ok\n"
        ),
    )
    .unwrap();
    fs::create_dir_all(via.parent().unwrap()).unwrap();
    symlink(venv, via).unwrap();
    symlink(via, root.join(".venv")).unwrap();
}

fn forge(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_forge"))
        .args(args)
        .current_dir(cwd)
        // What a shell sets after `cd` through a symlink: the logical path.
        .env("PWD", cwd)
        .env_remove("BUCK2_RE_HTTP_HEADERS")
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// Builds and tests the project at `cwd` (the path the user stands at) whose environment is
/// really at `venv`, and checks what the action and the test did.
fn builds_and_tests(cwd: &Path, venv: &Path) {
    let build = forge(cwd, &["build", "//:built", "--show-output"]);
    assert!(
        build.status.success(),
        "forge build in `{}`:\n{}",
        cwd.display(),
        text(&build)
    );
    let stdout = String::from_utf8_lossy(&build.stdout);
    let rel = stdout
        .lines()
        .find_map(|l| l.strip_prefix("root//:built "))
        .unwrap_or_else(|| panic!("no output line for //:built in:\n{stdout}"));
    let out = fs::read_to_string(cwd.join(rel.trim())).unwrap();
    assert_eq!(
        out,
        format!("declared input\n{TOOL_OUTPUT}\n{INTERP_OUTPUT}\n")
    );
    assert_eq!(
        fs::read_to_string(venv.join("stamp-built")).unwrap(),
        "built\n",
        "a write into the passthrough lands in the real environment"
    );
    let test = forge(cwd, &["test", "//:tested"]);
    assert!(
        test.status.success(),
        "forge test in `{}`:\n{}",
        cwd.display(),
        text(&test)
    );
    assert!(text(&test).contains("1 passed"), "{}", text(&test));
}

fn under_tmp() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("forge-clone-")
        .tempdir_in("/tmp")
        .unwrap()
}

#[test]
fn a_checkout_under_tmp_with_a_linked_environment_elsewhere_under_tmp() {
    let t = under_tmp();
    let base = t.path().canonicalize().unwrap();
    let venv = base.join("venvs/shared");
    make_environment(&venv);
    let root = base.join("copy");
    make_project(&root, &base.join("clone/.venv"), &venv);
    builds_and_tests(&root, &venv);
}

#[test]
fn a_checkout_under_a_path_with_spaces() {
    let t = under_tmp();
    let base = t.path().canonicalize().unwrap().join("my projects");
    let venv = base.join("shared envs/venv one");
    make_environment(&venv);
    let root = base.join("checkout two/aurora forge");
    make_project(&root, &base.join("checkout one/.venv"), &venv);
    builds_and_tests(&root, &venv);
}

#[test]
fn a_checkout_reached_through_a_symlinked_directory() {
    let t = under_tmp();
    let base = t.path().canonicalize().unwrap();
    fs::create_dir_all(base.join("real")).unwrap();
    symlink(base.join("real"), base.join("link")).unwrap();
    let venv = base.join("real/venv");
    make_environment(&venv);
    // Every path the project knows goes through the link, as for a user whose home or work
    // directory is one.
    let via_link = base.join("link");
    make_project(
        &via_link.join("project"),
        &via_link.join("other/.venv"),
        &via_link.join("venv"),
    );
    builds_and_tests(&via_link.join("project"), &venv);
}
