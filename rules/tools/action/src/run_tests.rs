//! `action run-tests TESTS_DIR CRATE_DIR [TEST ARGS...]` (was rules/tools/cargo/run_tests.sh):
//! runs every test executable `action cargo test-build` collected, from the crate's directory
//! with `CARGO_MANIFEST_DIR` set as `cargo test` does (tests that read fixtures use it), and
//! fails if any of them fails. It runs them all even after a failure, so one run reports
//! every failing executable. Like cargo-nextest it runs executables side by side (as many
//! as the machine has cores, at least two): a crate's test binaries spend much of their time waiting on
//! the processes they start. Each one's output is captured and printed whole, in name order,
//! as soon as it and every executable before it have ended.

use crate::util::{fail, Result};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::sync::{Condvar, Mutex};

#[derive(clap::Args)]
pub struct Args {
    /// the directory of collected test executables
    tests_dir: PathBuf,
    /// the crate's directory, project-relative
    crate_dir: PathBuf,
    /// arguments for every test executable
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<String>,
}

/// `cd DIR && pwd`: the absolute, logical path (no symlink resolved).
fn absolute(dir: &Path) -> Option<PathBuf> {
    let mut path = std::env::current_dir().ok()?;
    for c in dir.components() {
        match c {
            Component::RootDir => path = PathBuf::from("/"),
            Component::CurDir | Component::Prefix(_) => {}
            Component::ParentDir => {
                path.pop();
            }
            Component::Normal(n) => path.push(n),
        }
    }
    path.is_dir().then_some(path)
}

pub fn run(a: Args) -> Result {
    let Some(tests_dir) = absolute(&a.tests_dir) else {
        return fail(
            3,
            format!("run-tests: {}: no such directory", a.tests_dir.display()),
        );
    };
    let Some(crate_dir) = absolute(&a.crate_dir) else {
        return fail(
            3,
            format!("run-tests: {}: no such directory", a.crate_dir.display()),
        );
    };
    let mut exes: Vec<PathBuf> = std::fs::read_dir(&tests_dir)
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    exes.retain(|exe| {
        std::fs::metadata(exe)
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    });
    exes.sort();
    let ran = exes.len();
    let failed = run_side_by_side(&exes, &a.args, &crate_dir);
    if ran == 0 {
        return fail(1, format!("no test executables in {}", tests_dir.display()));
    }
    if !failed.is_empty() {
        return fail(1, format!("failing test executables: {}", failed.join(" ")));
    }
    Ok(())
}

/// One executable's run: whether it passed, and what it wrote to stdout and to stderr.
type Finished = (bool, Vec<u8>, Vec<u8>);

/// Runs `exes` from `crate_dir`, up to the core count (at least two) at once; prints each one's block in
/// order and returns the names of those that failed.
fn run_side_by_side(exes: &[PathBuf], args: &[String], crate_dir: &Path) -> Vec<String> {
    let next = Mutex::new(0usize);
    let done: Mutex<Vec<Option<Finished>>> = Mutex::new(exes.iter().map(|_| None).collect());
    let ended = Condvar::new();
    // At least two, on one core too: they mostly wait.
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .max(2)
        .min(exes.len());
    let mut failed = vec![];
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| loop {
                let i = {
                    let mut n = next.lock().unwrap();
                    *n += 1;
                    *n - 1
                };
                let Some(exe) = exes.get(i) else { break };
                let finished = run_one(exe, args, crate_dir);
                done.lock().unwrap()[i] = Some(finished);
                ended.notify_all();
            });
        }
        // This thread prints the blocks in name order as they become complete.
        for (i, exe) in exes.iter().enumerate() {
            let mut d = done.lock().unwrap();
            let (ok, stdout, stderr) = loop {
                match d[i].take() {
                    Some(f) => break f,
                    None => d = ended.wait(d).unwrap(),
                }
            };
            drop(d);
            let name = exe.file_name().unwrap().to_string_lossy().into_owned();
            print_block(&name, &stdout, &stderr);
            if !ok {
                failed.push(name);
            }
        }
    });
    failed
}

fn run_one(exe: &Path, args: &[String], crate_dir: &Path) -> Finished {
    match Command::new(exe)
        .args(args)
        .current_dir(crate_dir)
        .env("CARGO_MANIFEST_DIR", crate_dir)
        .stdin(std::process::Stdio::null())
        .output()
    {
        Ok(out) => (out.status.success(), out.stdout, out.stderr),
        Err(e) => (
            false,
            Vec::new(),
            format!("{}: {e}\n", exe.display()).into_bytes(),
        ),
    }
}

/// `== NAME`, then what the executable wrote to stdout and to stderr, each on its stream.
fn print_block(name: &str, stdout: &[u8], stderr: &[u8]) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "== {name}");
    let _ = out.write_all(stdout);
    let _ = out.flush();
    let _ = std::io::stderr().write_all(stderr);
}
