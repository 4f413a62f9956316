//! `action run-tests TESTS_DIR CRATE_DIR [TEST ARGS...]` (was rules/tools/cargo/run_tests.sh):
//! runs every test executable `action cargo test-build` collected, from the crate's directory
//! with `CARGO_MANIFEST_DIR` set as `cargo test` does (tests that read fixtures use it), and
//! fails if any of them fails. It runs them all even after a failure, so one run reports
//! every failing executable.

use crate::util::{fail, Result};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

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
    exes.sort();
    let mut ran = 0;
    let mut failed = vec![];
    for exe in exes {
        let executable = std::fs::metadata(&exe)
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false);
        if !executable {
            continue;
        }
        ran += 1;
        let name = exe.file_name().unwrap().to_string_lossy().into_owned();
        println!("== {name}");
        let ok = Command::new(&exe)
            .args(&a.args)
            .current_dir(&crate_dir)
            .env("CARGO_MANIFEST_DIR", &crate_dir)
            .status()
            .map(|s| s.success())
            .unwrap_or_else(|e| {
                eprintln!("{}: {e}", exe.display());
                false
            });
        if !ok {
            failed.push(name);
        }
    }
    if ran == 0 {
        return fail(1, format!("no test executables in {}", tests_dir.display()));
    }
    if !failed.is_empty() {
        return fail(1, format!("failing test executables: {}", failed.join(" ")));
    }
    Ok(())
}
