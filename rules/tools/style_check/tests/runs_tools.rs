//! The binary against real processes: their exit statuses and output are the reference.

use std::process::{Command, Output};

fn style_check(expect: &[&str], script: &str) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_style-check"));
    cmd.args(["--check", "demo", "--target", "//pkg:demo", "--fix", "do X"]);
    for e in expect {
        cmd.args(["--expect-rejection", e]);
    }
    cmd.args(["--", "sh", "-c", script]);
    cmd.output().unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn passes_the_tools_output_through_and_fails_with_the_fix() {
    let o = style_check(&[], "echo 'bad.sh line 2: SC2086'; exit 1");
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("SC2086"));
    assert!(stderr(&o).contains("To fix: do X"), "{}", stderr(&o));
    assert_eq!(style_check(&[], "exit 0").status.code(), Some(0));
}

#[test]
fn a_fixture_must_be_rejected_for_the_expected_reason() {
    let rejected = style_check(&["SC2086"], "echo 'SC2086' >&2; exit 1");
    assert_eq!(rejected.status.code(), Some(0), "{}", stderr(&rejected));
    let accepted = style_check(&["SC2086"], "exit 0");
    assert_eq!(accepted.status.code(), Some(1));
    let killed = style_check(&["SC2086"], "echo SC2086; kill -9 $$");
    assert_eq!(killed.status.code(), Some(1), "{}", stderr(&killed));
}

#[test]
fn a_missing_tool_is_named() {
    let o = Command::new(env!("CARGO_BIN_EXE_style-check"))
        .args([
            "--check",
            "demo",
            "--target",
            "//pkg:demo",
            "--fix",
            "x",
            "--",
        ])
        .arg("/nonexistent/buildifier")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("/nonexistent/buildifier"),
        "{}",
        stderr(&o)
    );
}

/// `--record` in a build action, `--replay` in the test: the verdict is the one a direct run
/// of the same tool gives.
fn record(file: &std::path::Path, script: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_style-check"))
        .arg("--record")
        .arg(file)
        .args(["--", "sh", "-c", script])
        .output()
        .unwrap()
}

fn replay(file: &std::path::Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_style-check"))
        .args(["--check", "demo", "--target", "//pkg:demo", "--fix", "do X"])
        .arg("--replay")
        .arg(file)
        .output()
        .unwrap()
}

#[test]
fn a_recorded_run_is_judged_later_as_if_run_then() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("demo.record");
    let failing = "echo 'src/a.rs:3: warning' >&2; echo out; exit 101";
    // recording succeeds whatever the tool's exit status
    assert_eq!(record(&file, failing).status.code(), Some(0));
    let (later, now) = (replay(&file), style_check(&[], failing));
    assert_eq!(later.status.code(), Some(1));
    assert_eq!(later.stdout, now.stdout);
    assert_eq!(stderr(&later), stderr(&now));
    assert!(stderr(&later).contains("exit 101"), "{}", stderr(&later));

    assert_eq!(record(&file, "exit 0").status.code(), Some(0));
    assert_eq!(replay(&file).status.code(), Some(0));
}

#[test]
fn a_killed_tool_leaves_no_record_and_a_missing_record_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("demo.record");
    let killed = record(&file, "kill -9 $$");
    assert_eq!(killed.status.code(), Some(2), "{}", stderr(&killed));
    assert!(stderr(&killed).contains("signal 9"), "{}", stderr(&killed));
    assert!(!file.exists());
    let missing = replay(&file);
    assert_eq!(missing.status.code(), Some(2));
    assert!(
        stderr(&missing).contains("demo.record"),
        "{}",
        stderr(&missing)
    );
}
