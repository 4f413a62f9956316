//! `forge test` gives each test a private TMPDIR and removes it afterwards: a test that
//! leaves something there fails, naming it; a clean one passes; one killed at its timeout
//! leaves nothing either. Run through the `forge` binary on a scratch workspace, with forge's
//! own TMPDIR a fresh directory that must be empty afterwards.

use std::fs;
use std::path::Path;
use std::process::Command;

const DEFS: &str = r#"def _script_test_impl(ctx):
    return [
        DefaultInfo(),
        ExternalRunnerTestInfo(type = "custom", command = ["/bin/sh", ctx.attrs.script]),
    ]

script_test = rule(impl = _script_test_impl, attrs = {"script": attrs.source()})
"#;

const BUCK: &str = r#"load("//:defs.bzl", "script_test")

script_test(name = "cleans", script = "cleans.sh")
script_test(name = "leaves", script = "leaves.sh")
script_test(name = "hangs", script = "hangs.sh")
"#;

/// Each script prints its TMPDIR, so the test can check where it was and that it is gone.
const SCRIPTS: &[(&str, &str)] = &[
    (
        "cleans.sh",
        "echo \"tmpdir=$TMPDIR\"\nd=$(mktemp -d)\ntrap 'rm -rf \"$d\"' EXIT\necho x >\"$d/f\"\n",
    ),
    (
        "leaves.sh",
        "echo \"tmpdir=$TMPDIR\"\necho x >\"$TMPDIR/leftover.txt\"\nmkdir \"$TMPDIR/tmp.left\"\n",
    ),
    (
        "hangs.sh",
        "echo \"tmpdir=$TMPDIR\"\nmkdir \"$TMPDIR/tmp.hung\"\nsleep 300\n",
    ),
];

fn workspace() -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap();
    let root = ws.path();
    fs::write(
        root.join(".buckconfig"),
        "[cells]\n  root = .\n  prelude = prelude\n\n[buildfile]\n  name = BUCK\n\n[test]\n  timeout = 5\n",
    )
    .unwrap();
    fs::create_dir_all(root.join("prelude")).unwrap();
    fs::write(root.join("prelude/prelude.bzl"), "").unwrap();
    fs::write(root.join("defs.bzl"), DEFS).unwrap();
    fs::write(root.join("BUCK"), BUCK).unwrap();
    for (name, text) in SCRIPTS {
        fs::write(root.join(name), text).unwrap();
    }
    ws
}

/// The TMPDIR each test printed (`tmpdir=...` lines of the output tails).
fn tmpdirs(stderr: &str) -> Vec<String> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("tmpdir="))
        .map(str::to_owned)
        .collect()
}

#[test]
fn each_test_gets_a_private_tmpdir_that_must_be_left_empty() {
    let ws = workspace();
    let callers_tmp = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_forge"))
        .args(["test", "//:"])
        .current_dir(ws.path())
        .env("TMPDIR", callers_tmp.path())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(32), "{stderr}");
    assert!(stderr.contains("✓ Pass: root//:cleans"), "{stderr}");
    assert!(stderr.contains("✗ Fail: root//:leaves"), "{stderr}");
    assert!(
        stderr.contains("the test left 2 entries in its TMPDIR")
            && stderr.contains("leftover.txt, tmp.left"),
        "the failure names what was left: {stderr}"
    );
    assert!(stderr.contains("✗ Timeout: root//:hangs"), "{stderr}");
    let dirs = tmpdirs(&stderr);
    assert_eq!(dirs.len(), 3, "one TMPDIR line per test: {stderr}");
    for d in &dirs {
        let d = Path::new(d);
        assert_eq!(
            d.parent(),
            Some(callers_tmp.path()),
            "{} is not a directory of its own in the caller's TMPDIR",
            d.display()
        );
        assert!(!d.exists(), "{} was not removed", d.display());
    }
    let left: Vec<_> = fs::read_dir(callers_tmp.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "forge left {left:?} in its TMPDIR");
}
