//! An action's execution root, `forge-re-*` in the worker's work directory. A worker removes
//! its own when the action ends, but a worker killed with SIGKILL cannot: so each root is
//! locked (flock) while its worker lives, and a worker starting in a work directory removes
//! the roots nobody holds a lock on, the dead workers' ones. Several workers may share one
//! work directory (by default the system's temporary directory): a live worker's root is
//! locked and stays.

use std::fs::{self, File};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

/// The name every execution root starts with; nothing else in a work dir is touched.
const PREFIX: &str = "forge-re-";

pub struct ExecRoot {
    path: PathBuf,
    /// Held for the root's life; released when the worker dies, however it dies.
    _lock: File,
}

impl ExecRoot {
    /// A new, locked, empty root in `work_dir`. It is made under a hidden name and renamed
    /// once locked, so a worker starting at that moment never sees it unlocked.
    pub fn create(work_dir: &Path) -> Result<ExecRoot> {
        let hidden = tempfile::Builder::new()
            .prefix(&format!(".{PREFIX}"))
            .tempdir_in(work_dir)
            .with_context(|| format!("creating an execution root in {}", work_dir.display()))?
            .keep();
        let lock = File::open(&hidden).and_then(|f| exclusive(&f).map(|()| f));
        let name = hidden.file_name().unwrap_or_default().to_string_lossy();
        let path = work_dir.join(name.trim_start_matches('.'));
        let lock = lock.and_then(|f| fs::rename(&hidden, &path).map(|()| f));
        match lock {
            Ok(f) => Ok(ExecRoot { path, _lock: f }),
            Err(e) => {
                let _ = fs::remove_dir_all(&hidden);
                Err(e).with_context(|| format!("locking {}", hidden.display()))
            }
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

impl Drop for ExecRoot {
    /// Removed while still locked (the lock goes with the field, after this).
    fn drop(&mut self) {
        let _ = remove_tree(&self.path);
    }
}

/// Removes the execution roots in `work_dir` that no live worker holds; returns them.
pub fn remove_dead(work_dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(work_dir) else {
        return Vec::new();
    };
    let mut removed = Vec::new();
    for e in entries.flatten() {
        let is_root = e.file_name().to_string_lossy().starts_with(PREFIX)
            && e.file_type().is_ok_and(|t| t.is_dir());
        if !is_root {
            continue;
        }
        // Taking the lock is what tells a dead worker's root from a live one's; holding it
        // while removing keeps two starting workers from racing on it.
        let Ok(f) = File::open(e.path()) else {
            continue;
        };
        if exclusive(&f).is_ok() && remove_tree(&e.path()).is_ok() {
            removed.push(e.path());
        }
    }
    removed
}

/// flock(LOCK_EX | LOCK_NB): an error when another open file holds the lock.
fn exclusive(f: &File) -> std::io::Result<()> {
    // SAFETY: flock on a descriptor this function borrows for the call.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Removes a root, also one whose action left directories without write permission.
fn remove_tree(path: &Path) -> std::io::Result<()> {
    if fs::remove_dir_all(path).is_ok() || !path.exists() {
        return Ok(());
    }
    make_writable(path);
    fs::remove_dir_all(path)
}

fn make_writable(dir: &Path) {
    let Ok(meta) = fs::symlink_metadata(dir) else {
        return;
    };
    if !meta.is_dir() {
        return;
    }
    let _ = fs::set_permissions(dir, fs::Permissions::from_mode(0o700));
    for e in fs::read_dir(dir).into_iter().flatten().flatten() {
        make_writable(&e.path());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_workers_root_is_removed_and_a_live_ones_stays() {
        let work = tempfile::tempdir().unwrap();
        let live = ExecRoot::create(work.path()).unwrap();
        assert!(
            live.path()
                .file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(PREFIX),
            "{}",
            live.path().display()
        );
        // what a SIGKILLed worker leaves: a root nobody holds, with a read-only directory
        let dead = work.path().join("forge-re-dead");
        fs::create_dir_all(dead.join("root/ro")).unwrap();
        fs::write(dead.join("root/ro/out"), "x").unwrap();
        fs::set_permissions(dead.join("root/ro"), fs::Permissions::from_mode(0o500)).unwrap();
        let other = work.path().join("not-a-root");
        fs::create_dir(&other).unwrap();

        assert_eq!(remove_dead(work.path()), vec![dead.clone()]);
        assert!(!dead.exists(), "{} is still there", dead.display());
        assert!(live.path().exists(), "the live root was removed");
        assert!(other.exists(), "a directory that is not a root was removed");

        let path = live.path().to_path_buf();
        drop(live);
        assert!(!path.exists(), "{} outlived its worker", path.display());
    }
}
