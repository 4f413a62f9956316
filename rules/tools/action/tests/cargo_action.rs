//! `action cargo` with the real cargo on a scratch workspace: the hint for a workspace member
//! whose sources are not among the action's inputs, and the copied binary and test
//! executables of a build that works (offline: the crates have no dependencies outside the
//! workspace), and a test build of one crate at its own opt-level.

use crate::common::{action, text, Run, Scratch};
use std::fs;

/// A workspace `a` (a binary with a test) + `b` in `members`.
fn workspace(s: &Scratch, with_b: bool) {
    s.write(
        "Cargo.toml",
        "[workspace]\nresolver = \"2\"\nmembers = [\"a\", \"b\"]\n",
    );
    s.write(
        "a/Cargo.toml",
        "[package]\nname = \"a\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    s.write(
        "a/src/main.rs",
        "fn main() { println!(\"a\"); }\n#[test]\nfn works() {}\n",
    );
    if with_b {
        s.write(
            "a/Cargo.toml",
            "[package]\nname = \"a\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\
             [dependencies]\nb = { path = \"../b\" }\n",
        );
        s.write(
            "b/Cargo.toml",
            "[package]\nname = \"b\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        );
        s.write("b/src/lib.rs", "");
    }
}

fn cargo_action(s: &Scratch, mode: &str, out: &[&str]) -> std::process::Output {
    cargo_action_in(s, "dev", mode, out)
}

fn cargo_action_in(s: &Scratch, profile: &str, mode: &str, out: &[&str]) -> std::process::Output {
    action()
        .current_dir(&s.0)
        .env_remove("CARGO_TARGET_DIR")
        .args(["cargo", mode, "--cargo", "cargo", "--profile", profile])
        .args(["--target-dir", "target", "--package", "a"])
        .args(out)
        .run()
}

#[test]
fn an_undeclared_workspace_member_gets_the_hint() {
    let s = Scratch::new("cargo-member");
    workspace(&s, false);
    // cargo wants a lock file under --locked: one from a complete workspace
    let out = cargo_action(&s, "build", &["--bin", "a", "--out", "a.bin"]);
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("failed to load manifest for workspace member"),
        "{err}"
    );
    assert!(
        err.contains("cargo_action: a member of the Cargo workspace is not among the inputs."),
        "{err}"
    );
    assert!(
        err.contains(
            "Add its `//<dir>:srcs` target to `members` of //:cargo_workspace in the root BUCK."
        ),
        "{err}"
    );
    assert!(!s.path("a.bin").exists());
}

#[test]
fn a_stale_lock_file_gets_the_hint_and_a_build_copies_its_outputs() {
    let s = Scratch::new("cargo-build");
    workspace(&s, true);
    // no Cargo.lock: --locked refuses to write one
    let out = cargo_action(&s, "build", &["--bin", "a", "--out", "a.bin"]);
    let (_, err) = text(&out);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("cargo_action: Cargo.lock does not match the manifests"),
        "{err}"
    );

    let lock = std::process::Command::new("cargo")
        .args(["generate-lockfile", "--offline"])
        .current_dir(&s.0)
        .run();
    assert!(lock.status.success(), "{:?}", text(&lock));
    // buck2 creates the parent of a declared output
    fs::create_dir_all(s.path("out")).unwrap();
    let out = cargo_action(&s, "build", &["--bin", "a", "--out", "out/a.bin"]);
    assert!(out.status.success(), "{:?}", text(&out));
    let run = std::process::Command::new(s.path("out/a.bin")).run();
    assert_eq!(text(&run).0, "a\n");
    assert_eq!(s.names("out"), vec!["a.bin"]);

    let out = cargo_action(&s, "test-build", &["--out-dir", "tests"]);
    let (_, err) = text(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("cargo_action: collected 1 test executable(s) of `a`"),
        "{err}"
    );
    let tests = s.names("tests");
    assert_eq!(tests.len(), 1);
    assert!(tests[0].starts_with("a-"), "{tests:?}");

    // the release binary's build, then the tests of `a` alone at opt-level 0 (cargo's own
    // report in its JSON messages), with the library `b` it uses taken from that build
    let out = cargo_action_in(
        &s,
        "release",
        "build",
        &["--bin", "a", "--out", "out/a.rel"],
    );
    assert!(out.status.success(), "{:?}", text(&out));
    let out = cargo_action_in(
        &s,
        "release",
        "test-build",
        &["--out-dir", "tests0", "--opt-level", "0"],
    );
    let (_, err) = text(&out);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("collected 1 test executable(s) of `a` (cargo's opt-level: 0)"),
        "{err}"
    );
    assert!(err.contains("Compiling a v0.1.0"), "{err}");
    assert!(!err.contains("Compiling b v0.1.0"), "{err}");

    let out = cargo_action(&s, "install", &[]);
    assert_eq!(out.status.code(), Some(3));
    assert!(text(&out)
        .1
        .contains("cargo_action: unknown mode `install` (expected build or test-build)"));
}
