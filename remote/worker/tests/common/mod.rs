//! One BuildGrid with execution (engine/grid's forge_re_grid: the project's configuration,
//! its own PostgreSQL) per test binary, and
//! forge-re-worker processes per test. Each test's workers advertise `test=<name>` and its
//! actions ask for it, so tests sharing the server never take each other's work.
//! Everything started here dies with the test process (PR_SET_PDEATHSIG from a thread
//! that lives as long as the process), and its files go with the server: the workers'
//! work directory lies in the server's.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Mutex, OnceLock};

pub struct Server {
    pub port: u16,
    /// Removed with the server (`Drop`, or at exit for the shared one): the grid's files and
    /// the workers' work directory, where a killed worker leaves its execution root.
    pub dir: PathBuf,
    address: String,
    /// postgres and bgd; stopped when the server goes, and die with the thread that started
    /// them in any case.
    grid: Mutex<Option<forge_re_grid::Grid>>,
}

static SERVER: OnceLock<Server> = OnceLock::new();

/// The shared server, started on first use by a thread that then parks for the process's
/// lifetime (its children's death signal fires when the process exits). A static is never
/// dropped, so the server is stopped and its directory removed when the test binary exits.
pub fn server() -> &'static Server {
    SERVER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            tx.send(start_server()).unwrap();
            loop {
                std::thread::park();
            }
        });
        let server = rx.recv().expect("the server thread panicked");
        // SAFETY: registers a function without arguments that only touches the static.
        unsafe { libc::atexit(stop_shared_server) };
        server
    })
}

extern "C" fn stop_shared_server() {
    if let Some(s) = SERVER.get() {
        s.shut_down();
    }
}

/// The project's BuildGrid (engine/grid) with short keepalive, so a killed bot's lease is
/// requeued within seconds, and the `test` key matched.
pub fn start_server() -> Server {
    let dir = tempfile::Builder::new()
        .prefix("forge-re-test-")
        .tempdir()
        .unwrap()
        .keep();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let bgd = forge_re_grid::tools::bgd(None, &root).unwrap_or_else(|e| panic!("{e:#}"));
    let grid = forge_re_grid::Grid::start(&forge_re_grid::Options {
        dir: dir.clone(),
        host: "127.0.0.1".to_string(),
        port: None,
        keepalive_timeout: 4,
        postgres: None,
        bgd: Some(bgd),
        extra_match_keys: vec!["test".to_string()],
        cache_only: false,
        cancel: None,
    })
    .unwrap_or_else(|e| {
        let _ = std::fs::remove_dir_all(&dir);
        panic!("{e:#}")
    });
    Server {
        port: grid.port,
        address: grid.address().to_string(),
        dir,
        grid: Mutex::new(Some(grid)),
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.shut_down();
    }
}

impl Server {
    pub fn address(&self) -> String {
        self.address.clone()
    }

    pub fn section(&self) -> BTreeMap<String, String> {
        let mut s = BTreeMap::new();
        s.insert("address".to_string(), self.address());
        s.insert("tls".to_string(), "false".to_string());
        s
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("bgd.log")).unwrap_or_default()
    }

    /// bgd killed and started again; PostgreSQL, and with it the scheduler's state, stays.
    pub fn restart(&mut self) {
        let grid = self.grid.get_mut().unwrap_or_else(|e| e.into_inner());
        grid.as_mut()
            .expect("the server was shut down")
            .restart_server()
            .unwrap_or_else(|e| panic!("restarting BuildGrid: {e:#}"));
    }

    /// The work directory of a test's workers: where a killed worker's execution root stays
    /// until the next worker started there removes it.
    pub fn work_dir(&self, test: &str) -> PathBuf {
        work_dir(&self.dir, test)
    }

    /// Stops the grid, then removes the directory.
    fn shut_down(&self) {
        drop(self.grid.lock().unwrap_or_else(|e| e.into_inner()).take());
        if self.dir.exists() {
            if let Err(e) = std::fs::remove_dir_all(&self.dir) {
                eprintln!("cannot remove {}: {e}", self.dir.display());
            }
        }
    }
}

/// The work directory of `test`'s workers under the engine's directory `dir`.
fn work_dir(dir: &Path, test: &str) -> PathBuf {
    dir.join(format!("work-{test}"))
}

/// A forge-re-worker process; killed (SIGKILL) on drop.
pub struct Worker {
    child: Option<Child>,
    pub log: PathBuf,
}

impl Worker {
    pub fn start(server: &Server, test: &str, n: usize) -> Worker {
        Self::start_with(server, test, n, &[])
    }

    pub fn start_with(server: &Server, test: &str, n: usize, props: &[&str]) -> Worker {
        Self::start_args(server, test, n, props, &[])
    }

    /// A worker with more properties and more command-line arguments.
    pub fn start_args(
        server: &Server,
        test: &str,
        n: usize,
        props: &[&str],
        args: &[&str],
    ) -> Worker {
        Self::start_env(server, test, n, props, args, &[])
    }

    /// A worker whose process has `env` set on top of the test's (e.g. its own `HOME`).
    pub fn start_env(
        server: &Server,
        test: &str,
        n: usize,
        props: &[&str],
        args: &[&str],
        env: &[(&str, &Path)],
    ) -> Worker {
        Self::start_at(&server.address(), &server.dir, test, n, props, args, env)
    }

    /// A worker of the engine at `address`, logging into `dir`.
    pub fn start_at(
        address: &str,
        dir: &Path,
        test: &str,
        n: usize,
        props: &[&str],
        args: &[&str],
        env: &[(&str, &Path)],
    ) -> Worker {
        let log = dir.join(format!("worker-{test}-{n}.log"));
        let f = std::fs::File::create(&log).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_forge-re-worker"));
        cmd.args(["--address", address])
            .args(["--property", "OSFamily=linux"])
            .args(["--property", &format!("test={test}")])
            .args(["--name", &format!("{test}-{n}")])
            .arg("--work-dir")
            .arg(work_dir(dir, test))
            .args(props.iter().flat_map(|p| ["--property", p]))
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(f.try_clone().unwrap())
            .stderr(f);
        forge_exec::own_group_dying_with_parent(&mut cmd);
        let child = cmd.spawn().unwrap();
        Worker {
            child: Some(child),
            log,
        }
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// How many leases this worker started.
    pub fn leases_run(&self) -> usize {
        self.log_text().matches(": running").count()
    }

    /// Kills the worker's whole process group (its sandboxes and actions with it, not only the
    /// worker), then reaps the worker, so nothing of it still writes into the test's
    /// directories when they are removed.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            // SAFETY: signals the process group this helper created (the leader is not yet
            // reaped, so its pid cannot name anyone else's group).
            unsafe { libc::kill(-(c.id() as i32), libc::SIGKILL) };
            let _ = c.wait();
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Every file under `dir` (following no symbolic link), for finding outputs and naming what
/// a test left behind.
pub fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() && !p.is_symlink() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}
