//! `forge test`: builds what the tests need and runs each test as soon as its inputs are
//! built, on the build's job permits, like buck2's built-in simple runner (cwd = project
//! root, environment cleared to an allowlist plus the test's own env and `BUCK_BUILD_ID`),
//! and prints buck2's per-test and summary lines, then the
//! `N passed, N failed` line CI reads. A test that exits 0 but printed `SKIPPED` fails
//! unless the `FORGE_ALLOW_MISSING` opt-out covers it (`skip_check`). Each test gets a
//! private `TMPDIR`, and passes only if it leaves it empty (`test_tmpdir`).

use std::collections::VecDeque;
use std::fs;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use anyhow::Result;

use forge_core::{ActionGraph, ActionId, ArtifactRef, TestSpec};

use crate::executor::{producer_for, Riders};
use crate::failure::{tail, write_full_log};
use crate::procs::spawn_tracked;
use crate::skip_check;
use crate::test_tmpdir::TestTmpdir;
use crate::{Executor, TestSummary};

/// Variables a test inherits from forge's environment (buck2's allowlist).
pub const TEST_ENV_ALLOWLIST: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "TMPDIR",
    "XDG_RUNTIME_DIR",
];

const PASS_TAIL_LINES: usize = 20;
const FAIL_TAIL_LINES: usize = 200;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Verdict {
    Pass,
    Fail,
    Timeout,
    Infra,
}

struct TestRun {
    verdict: Verdict,
    detail: String,
    took: Duration,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

fn run_one(
    root: &Path,
    spec: &TestSpec,
    build_id: &str,
    timeout: Option<Duration>,
    scratch: &Path,
    opt_out: &[String],
) -> TestRun {
    let start = Instant::now();
    let infra = |detail: String| TestRun {
        verdict: Verdict::Infra,
        detail,
        took: start.elapsed(),
        stdout: Vec::new(),
        stderr: Vec::new(),
    };
    let Some(program) = spec.command.argv.first() else {
        return infra("the test has an empty command".into());
    };
    let mut cmd = if program.contains('/') && !program.starts_with('/') {
        let mut c = Command::new(root.join(program.trim_start_matches("./")));
        c.arg0(program);
        c
    } else {
        Command::new(program)
    };
    cmd.args(&spec.command.argv[1..])
        .current_dir(root)
        .env_clear();
    for k in TEST_ENV_ALLOWLIST {
        if let Some(v) = std::env::var_os(k) {
            cmd.env(k, v);
        }
    }
    // forge's one addition to buck2's allowlist: the opt-out a test honours (only when in
    // force, so CI's tests never see it).
    if !opt_out.is_empty() {
        cmd.env(forge_allow_missing::VAR, opt_out.join(","));
    }
    // and a private TMPDIR, removed after the test (test_tmpdir); a test's own env may
    // still name another
    let tmpdir = match TestTmpdir::create() {
        Ok(t) => t,
        Err(e) => return infra(format!("cannot create the test's private TMPDIR: {e}")),
    };
    cmd.env("TMPDIR", tmpdir.path());
    cmd.envs(spec.command.env.iter().map(|(k, v)| (k, v)));
    cmd.env("BUCK_BUILD_ID", build_id);
    cmd.env("PWD", root);
    let out_path = scratch.with_extension("stdout");
    let err_path = scratch.with_extension("stderr");
    let files = fs::File::create(&out_path).and_then(|o| Ok((o, fs::File::create(&err_path)?)));
    let (out, err) = match files {
        Ok(f) => f,
        Err(e) => return infra(format!("cannot capture the test's output: {e}")),
    };
    cmd.stdin(Stdio::null()).stdout(out).stderr(err);
    // the test dies with forge instead of lingering
    crate::procs::own_group_dying_with_parent(&mut cmd);
    let (mut child, group) = match spawn_tracked(&mut cmd, &root.join("buck-out/forge/procs")) {
        Ok(c) => c,
        Err(e) => return infra(format!("cannot start `{program}`: {e}")),
    };
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(s)) => break Some(s),
            Ok(None) => {}
            Err(_) => break None,
        }
        if timeout.is_some_and(|t| start.elapsed() > t) {
            // The whole process group, so helpers the test started go too.
            // SAFETY: signalling the group we created for this test.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            timed_out = true;
            break child.wait().ok();
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    // Helpers the test left running die with it, whatever the verdict.
    group.finish();
    let stdout = fs::read(&out_path).unwrap_or_default();
    let stderr = fs::read(&err_path).unwrap_or_default();
    let _ = fs::remove_file(&out_path);
    let _ = fs::remove_file(&err_path);
    let (verdict, detail) = match status {
        _ if timed_out => (
            Verdict::Timeout,
            format!(
                "timed out after {:.1}s; its process group was killed",
                timeout.unwrap_or_default().as_secs_f64()
            ),
        ),
        Some(s) if s.success() => (Verdict::Pass, String::new()),
        Some(s) => match (s.code(), s.signal()) {
            (Some(c), _) => (Verdict::Fail, format!("exit code {c}")),
            (None, Some(sig)) => (Verdict::Fail, format!("killed by signal {sig}")),
            _ => (Verdict::Fail, "failed".into()),
        },
        None => (Verdict::Infra, "lost track of the test process".into()),
    };
    let (verdict, detail) = match skip_check::unallowed_skip(&stdout, &stderr, opt_out) {
        Some(line) if verdict == Verdict::Pass => {
            (Verdict::Fail, skip_check::failure_detail(&line))
        }
        _ => (verdict, detail),
    };
    // Checked after the group is gone, so nothing writes there any more. A failed test keeps
    // its verdict and gets the list too; one killed at its timeout could not clean up, so its
    // leftovers are only removed.
    let (verdict, detail) = match (tmpdir.finish(), verdict) {
        (Some(left), Verdict::Pass) => (Verdict::Fail, left),
        (Some(left), Verdict::Fail) => (verdict, format!("{detail}; {left}")),
        _ => (verdict, detail),
    };
    TestRun {
        verdict,
        detail,
        took: start.elapsed(),
        stdout,
        stderr,
    }
}

fn report_one(label: &str, run: &TestRun, root: &Path) -> String {
    let secs = run.took.as_secs_f64();
    let head = match run.verdict {
        Verdict::Pass => format!("✓ Pass: {label} ({secs:.1}s)"),
        // buck2's line exactly; the exit status goes after the output (see below).
        Verdict::Fail => format!("✗ Fail: {label} ({secs:.1}s)"),
        Verdict::Timeout => format!("✗ Timeout: {label} ({secs:.1}s, {})", run.detail),
        Verdict::Infra => format!("✗ Infra Failure: {label} ({})", run.detail),
    };
    let lines = if run.verdict == Verdict::Pass {
        PASS_TAIL_LINES
    } else {
        FAIL_TAIL_LINES
    };
    let mut text = format!(
        "{head}\n---- STDOUT ----\n{}\n---- STDERR ----\n{}",
        tail(&run.stdout, lines),
        tail(&run.stderr, lines)
    );
    if run.verdict == Verdict::Fail {
        text.push_str(&format!("\n({})", run.detail));
    }
    if run.verdict != Verdict::Pass {
        if let Some(rel) = write_full_log(root, "test", label, &head, &run.stdout, &run.stderr) {
            text.push_str(&format!("\n(full output: {rel})"));
        }
    }
    text
}

/// What the runs so far add up to: the summary and every label that did not pass.
type Results = Mutex<(TestSummary, Vec<String>)>;

/// Runs test `n` and records its verdict; returns its report block.
fn run_and_record(
    exec: &Executor,
    spec: &TestSpec,
    n: usize,
    scratch_dir: &Path,
    opt_out: &[String],
    results: &Results,
) -> String {
    let root = exec.project_root();
    let scratch = scratch_dir.join(format!("{}-{n}", std::process::id()));
    let timeout = exec.options().test_timeout;
    let run = run_one(root, spec, exec.build_id(), timeout, &scratch, opt_out);
    let label = spec.label.to_string();
    let text = report_one(&label, &run, root);
    let mut r = results.lock().unwrap();
    match run.verdict {
        Verdict::Pass => r.0.passed += 1,
        Verdict::Fail => r.0.failed += 1,
        Verdict::Timeout => r.0.timed_out += 1,
        Verdict::Infra => r.0.infra_failures += 1,
    }
    if run.verdict != Verdict::Pass {
        r.1.push(format!("{label} ({})", spec.configuration));
    }
    text
}

/// The actions producing `spec`'s built inputs: the test may start once they have run.
fn needs(graph: &ActionGraph, spec: &TestSpec) -> Vec<ActionId> {
    spec.command
        .inputs
        .iter()
        .filter_map(|input| match input {
            ArtifactRef::Build(p) => producer_for(graph, p),
            ArtifactRef::Source(_) => None,
        })
        .collect()
}

/// Builds, runs and reports `tests`; see [`crate::run_tests`]. Each test runs as soon as its
/// inputs are built, on the build's job permits, as buck2 runs them; when an action fails,
/// the tests that have not run yet and whose own inputs still build run afterwards (buck2
/// keeps going), and the others count as build failures.
pub fn run(exec: &Executor, graph: &ActionGraph, tests: Vec<TestSpec>) -> Result<TestSummary> {
    let root = exec.project_root().to_path_buf();
    let wanted: Vec<ArtifactRef> = tests
        .iter()
        .flat_map(|t| t.command.inputs.clone())
        .collect();
    let scratch_dir = root.join("buck-out/forge/tmp/test-runner");
    fs::create_dir_all(&scratch_dir)?;
    let results: Results = Mutex::new((TestSummary::default(), Vec::new()));
    let opt_out = skip_check::opt_out_in_force();
    let started: Vec<AtomicBool> = tests.iter().map(|_| AtomicBool::new(false)).collect();
    let run_test = |n: usize| {
        started[n].store(true, Ordering::SeqCst);
        run_and_record(exec, &tests[n], n, &scratch_dir, &opt_out, &results)
    };
    let riders = Riders {
        needs: tests.iter().map(|t| needs(graph, t)).collect(),
        run: &run_test,
    };
    if exec
        .build_with_riders(graph, &wanted, true, Some(&riders))
        .is_err()
    {
        let mut queue = VecDeque::new();
        for (n, t) in tests.iter().enumerate() {
            if started[n].load(Ordering::SeqCst) {
                continue;
            }
            if exec.build_quietly(graph, &t.command.inputs, false).is_ok() {
                queue.push_back(n);
            } else {
                let mut r = results.lock().unwrap();
                r.0.build_failures += 1;
                r.1.push(format!("{} ({})", t.label, t.configuration));
            }
        }
        let queue = Mutex::new(queue);
        std::thread::scope(|s| {
            for _ in 0..exec.options().jobs.max(1) {
                s.spawn(|| loop {
                    let Some(n) = queue.lock().unwrap().pop_front() else {
                        break;
                    };
                    eprintln!("{}", run_test(n));
                });
            }
        });
    }
    let (mut summary, mut failed_labels) = results.into_inner().unwrap();
    failed_labels.sort();
    eprintln!(
        "Tests finished: Pass {}. Fail {}. Timeout {}. Fatal 0. Skip 0. Omit 0. Infra Failure {}. Build failure {}",
        summary.passed, summary.failed, summary.timed_out, summary.infra_failures, summary.build_failures
    );
    let ran = summary.passed + summary.failed + summary.timed_out + summary.infra_failures;
    if ran == 0 {
        eprintln!("NO TESTS RAN");
    }
    if !failed_labels.is_empty() {
        eprintln!("{} TESTS FAILED", failed_labels.len());
        for l in &failed_labels {
            eprintln!("  ✗ {l}");
        }
    }
    summary.failed_labels = failed_labels;
    eprintln!(
        "{} passed, {} failed",
        summary.passed,
        summary.failed_total()
    );
    Ok(summary)
}
