//! What starting a server child takes, for BuildGrid and its PostgreSQL alike: a free port,
//! an appending log, and the wait until the child listens (or exits, or times out, or the
//! start is interrupted). Its own module so that `grid` (which starts PostgreSQL) and
//! `postgres` both use it without importing each other.

use std::fs::{File, OpenOptions};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

/// How long BuildGrid (a Python server, slow to import on a busy machine) may take to listen.
const START_TIMEOUT: Duration = Duration::from_secs(120);

/// Waits until `host:port` accepts connections; an early exit of `child` or a timeout is an
/// error carrying the log.
pub fn wait_listening(
    child: &mut Child,
    (host, port): (&str, u16),
    what: &str,
    log: &Path,
    cancel: Option<&AtomicBool>,
) -> Result<()> {
    let start = Instant::now();
    let tail = || std::fs::read_to_string(log).unwrap_or_default();
    loop {
        check(cancel)?;
        if let Some(status) = child.try_wait()? {
            bail!(
                "{what} exited early ({status}); log {}:\n{}",
                log.display(),
                tail()
            );
        }
        if TcpStream::connect((host, port)).is_ok() {
            return Ok(());
        }
        if start.elapsed() > START_TIMEOUT {
            bail!(
                "{what} did not listen on {host}:{port} within {} s; log {}:\n{}",
                START_TIMEOUT.as_secs(),
                log.display(),
                tail()
            );
        }
        std::thread::sleep(Duration::from_millis(100));
    }
}

pub(crate) fn check(cancel: Option<&AtomicBool>) -> Result<()> {
    if cancel.is_some_and(|c| c.load(Ordering::SeqCst)) {
        bail!("interrupted while starting BuildGrid");
    }
    Ok(())
}

pub fn free_port() -> Result<u16> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

/// An appending handle on a log file (stdout and stderr share it without clobbering).
pub fn log_file(path: &Path) -> Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .with_context(|| format!("opening {}", path.display()))
}
