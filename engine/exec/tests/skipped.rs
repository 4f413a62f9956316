//! A test that prints `SKIPPED` and exits 0 fails under `forge test`, unless the run's
//! `FORGE_ALLOW_MISSING` names the tool the line names; under `CI` the opt-out is ignored.
//! Each case runs the test runner in a child process (the opt-out is read from the process
//! environment), re-executing this binary (`skipped::child_entry`).

use std::path::Path;
use std::process::{Command, Stdio};

use crate::common::*;
use forge_core::{CommandSpec, ProvidersLabel, TestSpec};
use forge_exec::{run_tests, Executor, SandboxMode};

fn spec(name: &str, script: &str) -> TestSpec {
    let argv = sh(script);
    TestSpec {
        label: ProvidersLabel {
            target: label("t", name),
            sub_target: Vec::new(),
        },
        test_type: "custom".into(),
        command: CommandSpec {
            argv_absolute: argv.clone(),
            argv,
            env: Default::default(),
            inputs: Vec::new(),
        },
        labels: Vec::new(),
        configuration: "<unspecified>".into(),
    }
}

fn tests() -> Vec<TestSpec> {
    vec![
        spec("runs", "echo checked 3 things"),
        spec("bare_skip", "echo 'SKIPPED: nix-instantiate is not installed'"),
        // A test that honours the opt-out skips only when the variable reaches it.
        spec(
            "named_skip",
            "case \",$FORGE_ALLOW_MISSING,\" in *,bwrap,*) echo 'SKIPPED (FORGE_ALLOW_MISSING=bwrap): no bwrap' >&2 ;; *) echo 'no bwrap' >&2; exit 1 ;; esac",
        ),
        spec("failing_skip", "echo SKIPPED; exit 2"),
    ]
}

#[test]
#[ignore = "entry point of the child processes the other tests start"]
fn child_entry() {
    let Ok(ws) = std::env::var("FORGE_SKIPPED_WS") else {
        return;
    };
    let exec = Executor::new(options(Path::new(&ws), SandboxMode::SymlinkForest)).unwrap();
    let graph = GraphBuilder::default();
    let summary = run_tests(&exec, &graph.graph, tests()).unwrap();
    println!("FAILED {}", summary.failed_labels.join(" "));
}

/// The labels that failed when the runner ran with `env`, and its stderr.
fn failed_with(env: &[(&str, &str)]) -> (String, String) {
    let ws = tempfile::tempdir().unwrap();
    let out = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "skipped::child_entry",
            "--ignored",
            "--nocapture",
        ])
        .env_remove("FORGE_ALLOW_MISSING")
        .env_remove("CI")
        .env("FORGE_SKIPPED_WS", ws.path())
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let failed = stdout
        .lines()
        .find_map(|l| l.strip_prefix("FAILED "))
        .unwrap_or_else(|| panic!("no summary: {stdout}"))
        // labels as the summary prints them, with their configuration: drop it here
        .replace(" (<unspecified>)", "");
    (failed, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn a_skip_fails_unless_the_opt_out_names_its_tool() {
    let (failed, stderr) = failed_with(&[]);
    assert_eq!(
        failed, "root//t:bare_skip root//t:failing_skip root//t:named_skip",
        "{stderr}"
    );
    assert!(
        stderr.contains("✗ Fail: root//t:bare_skip (")
            && stderr.contains("printed `SKIPPED: nix-instantiate is not installed`"),
        "{stderr}"
    );
    assert!(stderr.contains("✓ Pass: root//t:runs ("), "{stderr}");

    let (failed, stderr) = failed_with(&[("FORGE_ALLOW_MISSING", "buildgrid,bwrap")]);
    assert_eq!(failed, "root//t:bare_skip root//t:failing_skip", "{stderr}");
    assert!(stderr.contains("✓ Pass: root//t:named_skip ("), "{stderr}");

    // Another tool's opt-out does not cover this skip.
    let (failed, _) = failed_with(&[("FORGE_ALLOW_MISSING", "buildgrid")]);
    assert!(failed.contains("root//t:named_skip"), "{failed}");

    let (failed, stderr) = failed_with(&[("FORGE_ALLOW_MISSING", "bwrap"), ("CI", "1")]);
    assert!(failed.contains("root//t:named_skip"), "{stderr}");
    assert!(
        stderr.contains("FORGE_ALLOW_MISSING=bwrap is ignored because CI is set"),
        "{stderr}"
    );
}
