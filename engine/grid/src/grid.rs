//! A running BuildGrid with execution: its PostgreSQL (unless given one), the tables
//! (`bgd migrate apply`, which the server does not do itself), then `bgd server start` on the
//! rendered configuration (or, cache-only, just the server). Each child leads its own
//! process group and dies with the thread that started it
//! (forge_exec::own_group_dying_with_parent); [`Grid::stop`] (also on drop) ends them all.
//! `DIR/address` exists exactly while the server is up, so a script may wait for it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};

use crate::config::{Config, Execution};
use crate::listen::{check, free_port, log_file, wait_listening};

#[derive(Clone, Debug)]
pub struct Options {
    /// Everything lives here: `buildgrid.yml`, `cas/`, `pg/`, the logs, `address`.
    pub dir: PathBuf,
    pub host: String,
    /// `None`: a free port.
    pub port: Option<u16>,
    pub keepalive_timeout: u32,
    /// An existing PostgreSQL (SQLAlchemy URL with `+psycopg2`); `None`: one of our own.
    pub postgres: Option<String>,
    /// BuildGrid's `bgd`; `None`: found by [`crate::tools::bgd`] from the current directory.
    pub bgd: Option<PathBuf>,
    pub extra_match_keys: Vec<String>,
    /// Only CAS, ByteStream and action cache (a remote cache): no scheduler, no PostgreSQL.
    pub cache_only: bool,
    /// Set (by a signal handler) to abandon a start in progress.
    pub cancel: Option<&'static AtomicBool>,
}

pub struct Grid {
    pub port: u16,
    pub dir: PathBuf,
    address: String,
    /// (name, process) in start order; stopped in reverse.
    children: Vec<(&'static str, Child)>,
    /// `bgd` and `host`, for [`Grid::restart_server`].
    bgd: PathBuf,
    host: String,
}

impl Grid {
    pub fn start(opts: &Options) -> Result<Grid> {
        let bgd = crate::tools::bgd(opts.bgd.as_deref(), &std::env::current_dir()?)?;
        let dir = &opts.dir;
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
        // A previous server's (killed before it could remove it) would name the wrong port.
        let _ = std::fs::remove_file(dir.join("address"));
        let mut grid = Grid {
            port: 0,
            dir: dir.clone(),
            address: String::new(),
            children: Vec::new(),
            bgd: bgd.clone(),
            host: opts.host.clone(),
        };
        let execution = if opts.cache_only {
            None
        } else {
            let url = match &opts.postgres {
                Some(url) => url.clone(),
                None => {
                    let pg = crate::postgres::start(dir, opts.cancel)?;
                    grid.children.push(("postgres", pg.child));
                    pg.url
                }
            };
            migrate(&bgd, &url, &dir.join("migrate.log"), opts.cancel)?;
            Some(Execution {
                postgres_url: url,
                keepalive_timeout: opts.keepalive_timeout,
                extra_match_keys: opts.extra_match_keys.clone(),
            })
        };
        grid.port = match opts.port {
            Some(p) => p,
            None => free_port()?,
        };
        let mut config = Config::cache_only(grid.port, dir.join("cas"));
        config.host = opts.host.clone();
        config.execution = execution;
        let config_path = dir.join("buildgrid.yml");
        std::fs::write(&config_path, config.render())?;
        let log = dir.join("bgd.log");
        let mut server = spawn_bgd(&bgd, &config_path, &log)?;
        let probe = if opts.host == "0.0.0.0" {
            "127.0.0.1"
        } else {
            &opts.host
        };
        let ready = wait_listening(
            &mut server,
            (probe, grid.port),
            "bgd server",
            &log,
            opts.cancel,
        );
        grid.children.push(("bgd server", server));
        ready?;
        grid.address = format!("grpc://{}:{}", advertised(&opts.host), grid.port);
        std::fs::write(dir.join("address"), format!("{}\n", grid.address))?;
        Ok(grid)
    }

    /// Kills `bgd server` (SIGKILL, as a crash would) and starts it again on the same port
    /// and configuration. Jobs, operations and bot sessions live in PostgreSQL, which keeps
    /// running: the new server knows what the old one was doing.
    pub fn restart_server(&mut self) -> Result<()> {
        let at = self
            .children
            .iter()
            .position(|(name, _)| *name == "bgd server")
            .context("no bgd server to restart")?;
        let (_, mut old) = self.children.remove(at);
        // SAFETY: signals a process group this module created and has not reaped.
        unsafe { libc::kill(-(old.id() as i32), libc::SIGKILL) };
        let _ = old.wait();
        let log = self.dir.join("bgd.log");
        let mut bgd = spawn_bgd(&self.bgd, &self.dir.join("buildgrid.yml"), &log)?;
        let probe = if self.host == "0.0.0.0" {
            "127.0.0.1"
        } else {
            &self.host
        };
        let ready = wait_listening(&mut bgd, (probe, self.port), "bgd server", &log, None);
        self.children.push(("bgd server", bgd));
        ready
    }

    /// `grpc://HOST:PORT`: the Execution, Bots, CAS, ByteStream and ActionCache services.
    pub fn address(&self) -> &str {
        &self.address
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("bgd.log")).unwrap_or_default()
    }

    /// The first child that has exited, with its status (the server is then broken).
    pub fn exited(&mut self) -> Option<String> {
        self.children.iter_mut().find_map(|(name, c)| {
            let status = c.try_wait().ok()??;
            Some(format!("{name} exited ({status})"))
        })
    }

    /// Ends every process group started here, newest first, and reaps the leaders.
    /// PostgreSQL first gets a fast shutdown (SIGINT), so a restart on the same directory
    /// finds a clean data directory.
    pub fn stop(&mut self) {
        if !self.address.is_empty() {
            let _ = std::fs::remove_file(self.dir.join("address"));
            self.address.clear();
        }
        while let Some((name, mut child)) = self.children.pop() {
            if name == "postgres" {
                // SAFETY: signals a child this module started and has not reaped.
                unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
                let start = Instant::now();
                while start.elapsed() < Duration::from_secs(10)
                    && matches!(child.try_wait(), Ok(None))
                {
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
            // SAFETY: signals a process group this module created (the leader is not yet
            // reaped, so its pid cannot name anyone else's group).
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
        }
    }
}

impl Drop for Grid {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The host clients and workers should use: the bound address, or this machine's name when
/// the server listens on every interface.
fn advertised(host: &str) -> String {
    if host == "0.0.0.0" || host == "::" {
        if let Ok(name) = std::fs::read_to_string("/proc/sys/kernel/hostname") {
            return name.trim().to_string();
        }
    }
    host.to_string()
}

/// `bgd server start CONFIG`, logging to `log`.
pub fn spawn_bgd(bgd: &Path, config: &Path, log: &Path) -> Result<Child> {
    let mut cmd = Command::new(bgd);
    cmd.args(["server", "start"])
        .arg(config)
        .stdin(Stdio::null())
        .stdout(log_file(log)?)
        .stderr(log_file(log)?);
    forge_exec::own_group_dying_with_parent(&mut cmd);
    cmd.spawn()
        .with_context(|| format!("starting {}", bgd.display()))
}

/// Creates the scheduler's tables. PostgreSQL accepts TCP a moment before it accepts
/// logins, hence the retries.
fn migrate(bgd: &Path, url: &str, log: &Path, cancel: Option<&AtomicBool>) -> Result<()> {
    let start = Instant::now();
    loop {
        check(cancel)?;
        let ok = Command::new(bgd)
            .args(["migrate", "apply", url])
            .stdin(Stdio::null())
            .stdout(log_file(log)?)
            .stderr(log_file(log)?)
            .status()
            .with_context(|| format!("running {} migrate apply", bgd.display()))?
            .success();
        if ok {
            return Ok(());
        }
        if start.elapsed() > Duration::from_secs(30) {
            bail!(
                "`{} migrate apply {url}` failed; log {}:\n{}",
                bgd.display(),
                log.display(),
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(300));
    }
}
