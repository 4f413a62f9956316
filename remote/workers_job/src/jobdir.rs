//! The job directory: one per written job, holding the script, the copy of the worker the
//! job runs and the logs. By default under the project's buck-out, which the cluster's nodes
//! see when the project is on a shared file system (as a home or project directory is).

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// The base directory: `dir`, or buck-out/remote-workers of the project around `cwd`.
fn base(dir: Option<&Path>, cwd: &Path) -> Result<PathBuf> {
    if let Some(d) = dir {
        return Ok(cwd.join(d));
    }
    match cwd.ancestors().find(|a| a.join(".buckroot").exists()) {
        Some(root) => Ok(root.join("buck-out/remote-workers")),
        None => bail!(
            "{} is not inside a forge project (no .buckroot above it): pass --dir DIR for the \
             job's script and logs",
            cwd.display()
        ),
    }
}

/// Makes a fresh job directory (absolute, without whitespace: Slurm's `#SBATCH -o` takes it
/// unquoted) and copies the worker binary into it; returns (directory, worker copy).
pub fn make(dir: Option<&Path>, worker: &Path) -> Result<(PathBuf, PathBuf)> {
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let base = base(dir, &cwd)?;
    std::fs::create_dir_all(&base).with_context(|| format!("creating {}", base.display()))?;
    let base = base.canonicalize()?;
    if base.to_string_lossy().chars().any(char::is_whitespace) {
        bail!(
            "the job directory {} has whitespace, which Slurm's #SBATCH -o cannot take: pass \
             --dir DIR without spaces",
            base.display()
        );
    }
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let job = base.join(format!("workers-{secs}-{}", std::process::id()));
    std::fs::create_dir(&job).with_context(|| format!("creating {}", job.display()))?;
    let copy = job.join("forge-re-worker");
    std::fs::copy(worker, &copy).with_context(|| {
        format!(
            "copying the worker {} into {}",
            worker.display(),
            job.display()
        )
    })?;
    Ok((job, copy))
}
