//! Each test's private `TMPDIR`, forge's addition to buck2's runner (buck2 passes the
//! caller's `TMPDIR` through, or none): a fresh directory per test, removed after it, so a
//! test killed at its timeout, or one that forgets a file, leaves nothing in the system's
//! temporary directory. A test that passed but left something there fails, naming what it
//! left: every test removes what it makes, and this is where the suite checks it.
//!
//! The directory lies in the system's temporary directory (the caller's `TMPDIR`, or
//! `/tmp`), not in buck-out: Open MPI, PMIx, munge and PostgreSQL put Unix sockets under
//! `TMPDIR`, whose paths may not exceed 107 bytes, and a checkout may lie deep.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::layout::remove_any;

/// How many leftovers the failure names (the count is always given).
const NAMED_LEFTOVERS: usize = 10;

pub struct TestTmpdir {
    path: PathBuf,
}

impl TestTmpdir {
    /// A new empty directory in the system's temporary directory.
    pub fn create() -> std::io::Result<TestTmpdir> {
        let path = tempfile::Builder::new()
            .prefix("forge-test-")
            .tempdir()?
            .keep();
        // Others may traverse it, as they may /tmp: a test running PostgreSQL as root starts
        // it as the `postgres` user, who must reach a data directory made under TMPDIR.
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755))?;
        Ok(TestTmpdir { path })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the directory; `Some(text)` names what the test left in it, if anything.
    pub fn finish(self) -> Option<String> {
        let mut left: Vec<String> = fs::read_dir(&self.path)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        left.sort();
        let removed = remove_tree(&self.path);
        let mut problems = Vec::new();
        if !left.is_empty() {
            problems.push(leftovers(&self.path, &left));
        }
        if let Err(e) = removed {
            problems.push(format!("cannot remove {}: {e}", self.path.display()));
        }
        (!problems.is_empty()).then(|| problems.join("; "))
    }
}

/// What the failure says: how many, the first few names, and what to do.
fn leftovers(dir: &Path, left: &[String]) -> String {
    let shown = &left[..left.len().min(NAMED_LEFTOVERS)];
    let more = if left.len() > shown.len() {
        ", …"
    } else {
        ""
    };
    let entries = if left.len() == 1 { "entry" } else { "entries" };
    format!(
        "the test left {} {entries} in its TMPDIR {}: {}{more}; {HOW}",
        left.len(),
        dir.display(),
        shown.join(", "),
    )
}

const HOW: &str = "a test removes what it makes, on success and on failure (shell: trap … EXIT; \
                   Rust: tempfile::TempDir; Python: tempfile.TemporaryDirectory)";

impl Drop for TestTmpdir {
    /// Reached only when `finish` was not (the runner's thread panicked).
    fn drop(&mut self) {
        if self.path.exists() {
            let _ = remove_tree(&self.path);
        }
    }
}

/// Removes `path`, also when the test left directories without write permission (a bundle's
/// read-only copy, an output tree): those are made writable for their owner first.
fn remove_tree(path: &Path) -> std::io::Result<()> {
    if remove_any(path).is_ok() {
        return Ok(());
    }
    for entry in walkdir::WalkDir::new(path).into_iter().flatten() {
        if entry.file_type().is_dir() {
            let _ = fs::set_permissions(entry.path(), fs::Permissions::from_mode(0o700));
        }
    }
    remove_any(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_directory_is_removed_silently() {
        let t = TestTmpdir::create().unwrap();
        let p = t.path().to_path_buf();
        assert_eq!(t.finish(), None);
        assert!(!p.exists(), "{} is still there", p.display());
    }

    #[test]
    fn leftovers_are_named_and_removed_even_read_only_ones() {
        let t = TestTmpdir::create().unwrap();
        let p = t.path().to_path_buf();
        fs::create_dir(p.join("tmp.abc")).unwrap();
        fs::write(p.join("tmp.abc/f"), "x").unwrap();
        fs::set_permissions(p.join("tmp.abc"), fs::Permissions::from_mode(0o500)).unwrap();
        fs::write(p.join("finn_build_1"), "x").unwrap();
        let text = t.finish().expect("leftovers reported");
        assert!(
            text.contains("left 2 entries") && text.contains("finn_build_1, tmp.abc"),
            "{text}"
        );
        assert!(!p.exists(), "{} is still there", p.display());
    }
}
