//! Where the programs come from: BuildGrid's `bgd` from the virtualenv `./forge` bootstraps
//! (tools/bootstrap/python/buildgrid), PostgreSQL from Debian's `postgresql` package
//! (tools/bootstrap/apt.txt). A missing one is an error saying how to get it.

use std::path::{Path, PathBuf};

use anyhow::{bail, Result};

/// `explicit`, else `FORGE_BGD`, else `.venv/buildgrid/bin/bgd` in `start` or the nearest
/// directory above it that has one (the workspace root when run from inside the workspace).
pub fn bgd(explicit: Option<&Path>, start: &Path) -> Result<PathBuf> {
    if let Some(p) = explicit
        .map(Path::to_path_buf)
        .or_else(|| std::env::var_os("FORGE_BGD").map(PathBuf::from))
    {
        if !p.is_file() {
            bail!(
                "BuildGrid's bgd is not at {} (from --bgd or FORGE_BGD)",
                p.display()
            );
        }
        return Ok(p);
    }
    for dir in start.ancestors() {
        let p = dir.join(".venv/buildgrid/bin/bgd");
        if p.is_file() {
            return Ok(p);
        }
    }
    bail!(
        "BuildGrid's bgd was not found in .venv/buildgrid/bin of {} or a directory above it: \
         run ./forge once in the workspace (it bootstraps BuildGrid from \
         tools/bootstrap/python/buildgrid), or pass --bgd PATH / set FORGE_BGD",
        start.display()
    )
}

/// A PostgreSQL server program (`initdb`, `postgres`): Debian keeps them in
/// /usr/lib/postgresql/<version>/bin, the newest version wins.
pub fn postgres_program(name: &str) -> Result<PathBuf> {
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse().ok()?;
            Some((v, e.path().join("bin").join(name)))
        })
        .collect();
    versions.sort();
    let candidates = versions
        .into_iter()
        .rev()
        .map(|(_, p)| p)
        .chain(["/usr/local/bin", "/usr/bin"].map(|d| Path::new(d).join(name)));
    for p in candidates {
        if p.is_file() {
            return Ok(p);
        }
    }
    bail!(
        "PostgreSQL's `{name}` is not installed (BuildGrid's scheduler needs PostgreSQL): \
         ./forge bootstraps it (Debian package `postgresql`, tools/bootstrap/apt.txt), \
         or pass --postgres URL of a running server"
    )
}
