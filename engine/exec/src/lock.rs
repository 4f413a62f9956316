//! The workspace lock (`buck-out/forge/lock`): two forge processes on one workspace take
//! turns instead of interleaving writes to `buck-out/forge`. The kernel drops an `flock`
//! when its process dies, so a killed forge never leaves the workspace locked.
//!
//! Only writers need it: a build that finds the lock held first checks, reading only, whether
//! everything it needs is already up to date (`Executor::build_quietly`), and then proceeds
//! without it, so `forge run` of a built tool is not stuck behind a long build.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::unix::io::AsRawFd;
use std::path::Path;

use anyhow::{Context, Result};

pub struct WorkspaceLock {
    file: File,
}

fn flock(file: &File, flags: libc::c_int) -> std::io::Result<()> {
    // SAFETY: flock on a file descriptor we own.
    if unsafe { libc::flock(file.as_raw_fd(), flags) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

impl WorkspaceLock {
    /// Takes the lock if no other process holds it; `None` when one does.
    pub fn try_acquire(path: &Path) -> Result<Option<WorkspaceLock>> {
        let file = open(path)?;
        if flock(&file, libc::LOCK_EX | libc::LOCK_NB).is_err() {
            return Ok(None);
        }
        WorkspaceLock::holding(file).map(Some)
    }

    /// Waits until the lock is free and takes it, saying on stderr who holds it meanwhile.
    pub fn wait_for(path: &Path) -> Result<WorkspaceLock> {
        let mut file = open(path)?;
        if flock(&file, libc::LOCK_EX | libc::LOCK_NB).is_err() {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            eprintln!(
                "forge: waiting for another forge process{} using this workspace (`{}`)",
                if holder.is_empty() {
                    String::new()
                } else {
                    format!(" (pid {holder})")
                },
                path.display()
            );
            flock(&file, libc::LOCK_EX).with_context(|| format!("locking `{}`", path.display()))?;
        }
        WorkspaceLock::holding(file)
    }

    /// The lock just taken on `file`: it names this process for the next one that waits.
    fn holding(mut file: File) -> Result<WorkspaceLock> {
        file.set_len(0)?;
        file.rewind()?;
        write!(file, "{}", std::process::id())?;
        Ok(WorkspaceLock { file })
    }
}

fn open(path: &Path) -> Result<File> {
    fs::create_dir_all(path.parent().expect("lock has a parent"))?;
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .with_context(|| format!("opening `{}`", path.display()))
}

impl Drop for WorkspaceLock {
    fn drop(&mut self) {
        let _ = self.file.set_len(0);
        let _ = flock(&self.file, libc::LOCK_UN);
    }
}
