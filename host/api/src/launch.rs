//! Started outside MPI, `aurora-host` starts itself under `mpirun`, one rank per xclbin,
//! and decides the run's exit status: every rank ends with a `done` line and the launcher
//! fails unless every rank printed it and none printed an error. A rank that dies (killed,
//! crashed) ends the job at once: mpirun notices it and ends the others, and the launcher
//! names the rank and its node, instead of every survivor waiting for its link timeout.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use anyhow::{Context, Result};

use crate::rank_lines::{DONE, ERROR};

/// True when this process is an MPI rank (Open MPI or a PMIx launcher set these).
pub fn under_mpi() -> bool {
    std::env::var_os("OMPI_COMM_WORLD_SIZE").is_some() || std::env::var_os("PMIX_RANK").is_some()
}

/// `simulated`: the ranks drive simulated devices (many polling threads per rank).
pub fn launch(mpirun: &str, ranks: usize, progress: bool, simulated: bool) -> Result<i32> {
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
    cmd.env("TMPDIR", session.path()).args(["--oversubscribe"]);
    if simulated {
        // A simulated rank's link and kernel threads need the cores its MPI progress would
        // spin on: where Open MPI thinks a node is not oversubscribed (a Slurm allocation
        // with a slot per rank) it polls without yielding, and on a machine with fewer cores
        // than ranks the ranks then starve each other's TCP connection set-up (seen as
        // "failed to TCP connect to a peer MPI process" and a hung job).
        cmd.args(["--mca", "mpi_yield_when_idle", "1"]);
    }
    cmd.arg("-n").arg(ranks.to_string()).arg(&exe).args(&args);
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
    let mut cpu: Vec<f64> = Vec::new();
    let mut errors = Vec::new();
    let mut died = Vec::new();
    let stderr = child.stderr.take().unwrap();
    for line in BufReader::new(stderr).lines() {
        let line = line?;
        if let Some(r) = line.strip_prefix(DONE) {
            // "3 cpu 1.234": the rank, then the CPU seconds its process used
            let mut words = r.split_whitespace();
            if let Some(rank) = words.next() {
                done.insert(rank.to_string());
            }
            if let (Some("cpu"), Some(s)) = (words.next(), words.next()) {
                cpu.push(s.parse::<f64>().unwrap_or(0.0));
            }
            continue;
        }
        if display.take(&line) {
            continue;
        }
        if line.starts_with(ERROR) && line.contains(": error: ") {
            errors.push(line.clone());
        }
        if let Some(d) = died_rank(&line) {
            died.push(d);
        }
        display.print(&line);
    }
    display.clear();
    let status = child.wait()?;
    let missing: Vec<String> = (0..ranks)
        .map(|r| r.to_string())
        .filter(|r| !done.contains(r))
        .collect();
    // mpirun's own status is not the verdict: a rank that printed its done line and then
    // ended slowly in MPI_Finalize on a loaded machine is reported by mpirun as "exiting
    // improperly" with a failed status, though every rank finished the command; a rank
    // that died before its done line is missing, one killed is in `died`.
    if errors.is_empty() && missing.is_empty() && died.is_empty() {
        if simulated && !cpu.is_empty() {
            // what a simulated ring costs to size a larger one (docs/benchmarks.md)
            let total: f64 = cpu.iter().sum();
            let most = cpu.iter().cloned().fold(0.0, f64::max);
            eprintln!(
                "aurora-host: {} ranks used {total:.1} s of CPU ({:.2} s per rank, at most {most:.2})",
                cpu.len(),
                total / cpu.len() as f64
            );
        }
        if !status.success() {
            eprintln!("aurora-host: every rank finished; mpirun ended with {status} (see its message above)");
        }
        return Ok(0);
    }
    for d in &died {
        eprintln!("aurora-host: FAILED: {d}; mpirun ended the other ranks");
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

/// Open MPI 4.1's notice of a rank that died without an error of its own (killed, crashed):
/// "mpirun noticed that process rank 7 with PID 0 on node n03 exited on signal 9 (Killed)."
/// as "rank 7 on node n03 exited on signal 9 (Killed)".
pub fn died_rank(line: &str) -> Option<String> {
    let rest = line.strip_prefix("mpirun noticed that process rank ")?;
    let (rank, rest) = rest.split_once(" with PID ")?;
    let (_, rest) = rest.split_once(" on node ")?;
    let (node, how) = rest.split_once(' ')?;
    Some(format!(
        "rank {rank} on node {node} {}",
        how.trim_end_matches('.')
    ))
}

extern "C" {
    #[link_name = "geteuid"]
    fn libc_geteuid() -> u32;
}

#[cfg(test)]
mod tests {
    #[test]
    fn mpiruns_notice_of_a_dead_rank_names_rank_and_node() {
        assert_eq!(
            super::died_rank(
                "mpirun noticed that process rank 7 with PID 0 on node n03 exited on signal 9 (Killed)."
            )
            .as_deref(),
            Some("rank 7 on node n03 exited on signal 9 (Killed)")
        );
        assert_eq!(super::died_rank("aurora-host: rank 7: error: x"), None);
    }
}
