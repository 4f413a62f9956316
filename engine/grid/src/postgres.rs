//! A private PostgreSQL for BuildGrid's scheduler, kept under the server's directory
//! (`DIR/pg/data`, socket in `DIR/pg`, logs beside): initdb on first use, reused after.
//! PostgreSQL refuses to run as root, so as root it runs as Debian's `postgres` user.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

use std::sync::atomic::AtomicBool;

use anyhow::{bail, Context, Result};

use crate::listen::{free_port, log_file, wait_listening};
use crate::tools::postgres_program;

pub struct Postgres {
    pub child: Child,
    /// The SQLAlchemy URL BuildGrid connects with.
    pub url: String,
}

pub fn start(dir: &Path, cancel: Option<&AtomicBool>) -> Result<Postgres> {
    let initdb = postgres_program("initdb")?;
    let postgres = postgres_program("postgres")?;
    let pg = dir.join("pg");
    let data = pg.join("data");
    std::fs::create_dir_all(&pg).with_context(|| format!("creating {}", pg.display()))?;
    let ids = if unsafe { libc::geteuid() } == 0 {
        let ids = postgres_ids()?;
        reachable_by(&pg, ids.0)?;
        std::os::unix::fs::chown(&pg, Some(ids.0), Some(ids.1))
            .with_context(|| format!("chown {} to the postgres user", pg.display()))?;
        Some(ids)
    } else {
        None
    };
    let as_pg = |cmd: &mut Command| {
        if let Some((uid, gid)) = ids {
            cmd.uid(uid).gid(gid);
        }
    };
    if !data.join("PG_VERSION").exists() {
        let log = dir.join("initdb.log");
        let mut cmd = Command::new(&initdb);
        cmd.args(["--auth=trust", "-U", "postgres", "--no-sync", "-D"])
            .arg(&data)
            .stdin(Stdio::null())
            .stdout(log_file(&log)?)
            .stderr(log_file(&log)?);
        as_pg(&mut cmd);
        let ok = cmd
            .status()
            .with_context(|| format!("running {}", initdb.display()))?
            .success();
        if !ok {
            bail!(
                "{} -D {} failed; log {}:\n{}",
                initdb.display(),
                data.display(),
                log.display(),
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        }
    }
    clear_stale_lock(&data);
    let port = free_port()?;
    let log = dir.join("postgres.log");
    let mut cmd = Command::new(&postgres);
    cmd.arg("-D")
        .arg(&data)
        .args(["-p", &port.to_string(), "-k"])
        .arg(&pg)
        .args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
        .stdin(Stdio::null())
        .stdout(log_file(&log)?)
        .stderr(log_file(&log)?);
    as_pg(&mut cmd);
    forge_exec::own_group_dying_with_parent(&mut cmd);
    let mut child = cmd
        .spawn()
        .with_context(|| format!("starting {}", postgres.display()))?;
    if let Err(e) = wait_listening(&mut child, ("127.0.0.1", port), "postgres", &log, cancel) {
        // SAFETY: the group of the child just started, not yet reaped.
        unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
        let _ = child.wait();
        return Err(e);
    }
    Ok(Postgres {
        child,
        url: format!("postgresql+psycopg2://postgres@127.0.0.1:{port}/postgres"),
    })
}

/// The `postgres` user must be able to traverse every directory above its data directory.
fn reachable_by(pg: &Path, uid: u32) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    for dir in pg.ancestors().skip(1) {
        let Ok(m) = std::fs::metadata(dir) else {
            continue;
        };
        let traversable = m.mode() & 0o001 != 0 || (m.uid() == uid && m.mode() & 0o100 != 0);
        if !traversable {
            bail!(
                "PostgreSQL runs as the `postgres` user (we are root), who cannot enter {}: \
                 give it a --dir below directories others may traverse, or `chmod o+x {}`",
                dir.display(),
                dir.display()
            );
        }
    }
    Ok(())
}

/// After a SIGKILL the data directory keeps `postmaster.pid`, and PostgreSQL refuses to start
/// while the process it names exists, even as a zombie not yet reaped by init. A lock whose
/// process is gone or a zombie is removed; a live one is left for PostgreSQL to report.
fn clear_stale_lock(data: &Path) {
    let lock = data.join("postmaster.pid");
    let Ok(text) = std::fs::read_to_string(&lock) else {
        return;
    };
    let Some(pid) = text
        .lines()
        .next()
        .and_then(|l| l.trim().parse::<u32>().ok())
    else {
        return;
    };
    let state = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s[s.rfind(')')? + 2..].chars().next());
    if matches!(state, None | Some('Z')) {
        let _ = std::fs::remove_file(&lock);
    }
}

fn postgres_ids() -> Result<(u32, u32)> {
    let passwd = std::fs::read_to_string("/etc/passwd")?;
    let Some(line) = passwd.lines().find(|l| l.starts_with("postgres:")) else {
        bail!(
            "running as root, PostgreSQL needs the `postgres` user (Debian's `postgresql` \
             package creates it; ./forge bootstraps it from tools/bootstrap/apt.txt)"
        );
    };
    let f: Vec<&str> = line.split(':').collect();
    Ok((f[2].parse()?, f[3].parse()?))
}
