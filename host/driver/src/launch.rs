//! Started outside MPI, `aurora-host` starts itself under `mpirun`, one rank per xclbin,
//! and decides the run's exit status. `mpirun --enable-recovery` keeps a dead rank from
//! taking the job down before the survivors can say which rank and link broke, but then
//! mpirun's own status is always 0; so every rank ends with a `done` line and the launcher
//! fails unless every rank printed it and none printed an error.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use anyhow::{Context, Result};

pub const DONE: &str = "aurora-host: done rank ";
pub const ERROR: &str = "aurora-host: rank ";

/// Writes one whole line to stderr in a single write: mpirun merges the ranks' output, and
/// a line written in pieces can interleave with another rank's.
pub fn stderr_line(line: &str) {
    let mut bytes = line.as_bytes().to_vec();
    bytes.push(b'\n');
    let _ = std::io::stderr().lock().write_all(&bytes);
}

/// True when this process is an MPI rank (Open MPI or a PMIx launcher set these).
pub fn under_mpi() -> bool {
    std::env::var_os("OMPI_COMM_WORLD_SIZE").is_some() || std::env::var_os("PMIX_RANK").is_some()
}

pub fn launch(mpirun: &str, ranks: usize, progress: bool) -> Result<i32> {
    let exe = std::env::current_exe()?;
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let show = crate::progress::Display::wanted(progress);
    if show {
        // before the subcommand: a global option of every rank
        args.insert(0, "--progress-lines".into());
    }
    let mut display = crate::progress::Display::new();
    // A private session directory per launch: Open MPI 4 creates `$TMPDIR/ompi.<host>.<uid>`
    // with a check-then-mkdir race, so two runs started at once on one node (parallel
    // tests, two jobs sharing a node) can fail with "mkdir ... File exists".
    let session = tempfile::Builder::new()
        .prefix("aurora-host-mpi.")
        .tempdir()
        .context("creating a session directory for mpirun")?;
    let mut cmd = Command::new(mpirun);
    cmd.env("TMPDIR", session.path())
        .args(["--oversubscribe", "--enable-recovery", "-n"])
        .arg(ranks.to_string())
        .arg(&exe)
        .args(&args);
    // Open MPI refuses root without these (containers and CI run as root).
    if unsafe { libc_geteuid() } == 0 {
        cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    }
    let mut child = cmd
        .stdout(Stdio::inherit())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {mpirun} (Open MPI, Debian openmpi-bin)"))?;
    let mut done = BTreeSet::new();
    let mut errors = Vec::new();
    let stderr = child.stderr.take().unwrap();
    for line in BufReader::new(stderr).lines() {
        let line = line?;
        if let Some(r) = line.strip_prefix(DONE) {
            done.insert(r.trim().to_string());
            continue;
        }
        if display.take(&line) {
            continue;
        }
        if line.starts_with(ERROR) && line.contains(": error: ") {
            errors.push(line.clone());
        }
        display.print(&line);
    }
    display.clear();
    let status = child.wait()?;
    let missing: Vec<String> = (0..ranks)
        .map(|r| r.to_string())
        .filter(|r| !done.contains(r))
        .collect();
    if errors.is_empty() && missing.is_empty() && status.success() {
        return Ok(0);
    }
    eprintln!(
        "aurora-host: FAILED: {} rank(s) did not finish: {}",
        missing.len(),
        missing.join(", ")
    );
    for e in &errors {
        eprintln!("  {e}");
    }
    Ok(2)
}

extern "C" {
    #[link_name = "geteuid"]
    fn libc_geteuid() -> u32;
}
