//! One BuildGrid with execution (PostgreSQL scheduler, as BuildGrid 0.4.4 requires; the
//! bots, execution, CAS and action-cache services on one port) per test binary, and
//! forge-re-worker processes per test. Each test's workers advertise `test=<name>` and its
//! actions ask for it, so tests sharing the server never take each other's work.
//! Everything started here dies with the test process (PR_SET_PDEATHSIG from a thread
//! that lives as long as the process).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub struct Server {
    pub port: u16,
    pub dir: PathBuf,
    /// postgres and bgd, kept so they are not zombies; they die with the process.
    _children: Vec<Child>,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `FORGE_BGD` or the bootstrap's `.venv/buildgrid/bin/bgd`; a missing one fails the test.
fn bgd() -> PathBuf {
    let p = std::env::var_os("FORGE_BGD")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join(".venv/buildgrid/bin/bgd"));
    assert!(
        p.exists(),
        "BuildGrid's bgd is not at {} (run tools/bootstrap, or set FORGE_BGD)",
        p.display()
    );
    p
}

fn find(name: &str) -> PathBuf {
    for dir in ["/usr/local/bin", "/usr/bin", "/usr/lib/postgresql/15/bin"] {
        let p = Path::new(dir).join(name);
        if p.exists() {
            return p;
        }
    }
    panic!("`{name}` (PostgreSQL, which BuildGrid's scheduler needs) is not installed");
}

/// A child that dies when the spawning thread ends.
fn die_with_parent(cmd: &mut Command) -> &mut Command {
    // SAFETY: prctl is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            Ok(())
        })
    }
}

fn wait_port(port: u16, what: &str, log: &Path) {
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if start.elapsed() > Duration::from_secs(60) {
            panic!(
                "{what} did not listen within 60 s; log:\n{}",
                std::fs::read_to_string(log).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The shared server, started on first use by a thread that then parks for the process's
/// lifetime (its children's death signal fires when the process exits).
pub fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            tx.send(start_server()).unwrap();
            loop {
                std::thread::park();
            }
        });
        rx.recv().expect("the server thread panicked")
    })
}

fn start_server() -> Server {
    let dir = tempfile::Builder::new()
        .prefix("forge-re-test-")
        .tempdir()
        .unwrap()
        .keep();
    let pg = dir.join("pg");
    std::fs::create_dir_all(&pg).unwrap();
    // PostgreSQL refuses to run as root: it runs as the `postgres` user when we are root.
    let (uid, gid) = postgres_ids();
    std::os::unix::fs::chown(&pg, Some(uid), Some(gid)).unwrap();
    let as_pg = |cmd: &mut Command| {
        if unsafe { libc::geteuid() } == 0 {
            cmd.uid(uid).gid(gid);
        }
    };
    let mut initdb = Command::new(find("initdb"));
    initdb
        .args(["--auth=trust", "-U", "postgres", "--no-sync", "-D"])
        .arg(pg.join("data"))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    as_pg(&mut initdb);
    assert!(initdb.status().unwrap().success(), "initdb failed");
    let pg_port = free_port();
    let pg_log = dir.join("postgres.log");
    let mut postgres = Command::new(find("postgres"));
    postgres
        .arg("-D")
        .arg(pg.join("data"))
        .args(["-p", &pg_port.to_string(), "-k"])
        .arg(&pg)
        .args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
        .stdout(std::fs::File::create(&pg_log).unwrap())
        .stderr(std::fs::File::create(dir.join("postgres.err")).unwrap());
    as_pg(&mut postgres);
    let pg_child = die_with_parent(&mut postgres).spawn().unwrap();
    wait_port(pg_port, "postgres", &dir.join("postgres.err"));
    let url = format!("postgresql+psycopg2://postgres@127.0.0.1:{pg_port}/postgres");
    // The server does not create its tables; `bgd migrate apply` does (BuildGrid's docs).
    let mut ok = false;
    for _ in 0..50 {
        ok = Command::new(bgd())
            .args(["migrate", "apply", &url])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .unwrap()
            .success();
        if ok {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(ok, "bgd migrate apply failed");
    let port = free_port();
    let config = dir.join("buildgrid.yml");
    std::fs::write(&config, config_text(port, &dir.join("cas"), &url)).unwrap();
    let log = dir.join("bgd.log");
    let f = std::fs::File::create(&log).unwrap();
    let mut bgd_cmd = Command::new(bgd());
    bgd_cmd
        .args(["server", "start"])
        .arg(&config)
        .stdin(Stdio::null())
        .stdout(f.try_clone().unwrap())
        .stderr(f);
    let bgd_child = die_with_parent(&mut bgd_cmd).spawn().unwrap();
    wait_port(port, "bgd", &log);
    Server {
        port,
        dir,
        _children: vec![pg_child, bgd_child],
    }
}

fn postgres_ids() -> (u32, u32) {
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap();
    let line = passwd
        .lines()
        .find(|l| l.starts_with("postgres:"))
        .expect("a `postgres` user (Debian's postgresql package makes it)");
    let f: Vec<&str> = line.split(':').collect();
    (f[2].parse().unwrap(), f[3].parse().unwrap())
}

/// BuildGrid 0.4.4 configuration; the keepalive and expiry intervals are short so a killed
/// bot's lease is requeued within seconds (defaults: 600 s keepalive, 10 s reaper).
fn config_text(port: u16, cas: &Path, url: &str) -> String {
    format!(
        r#"server:
  - !channel
    address: "127.0.0.1:{port}"
    insecure-mode: true
authorization:
  method: none
storages:
  - !disk-storage &cas
    path: {cas}
caches:
  - !lru-action-cache &ac
    storage: *cas
    max-cached-refs: 10000
    allow-updates: true
    cache-failed-actions: false
schedulers:
  - !sql-scheduler &sched
    storage: *cas
    action-cache: *ac
    sql: !sql-connection
      connection-string: {url}
    property-set: !dynamic-property-set
      match-property-keys: [OSFamily, fpga-tools, test]
      # forge's toolchain identity (`forge-tool`) is part of every Command's platform.
      wildcard-property-keys: [forge-tool]
    bot-session-keepalive-timeout: 4
    session-expiry-timer-interval: 1
    poll-interval: 0.2
instances:
  - name: ""
    services:
      - !action-cache
        cache: *ac
      - !cas
        storage: *cas
      - !bytestream
        storage: *cas
      - !execution
        scheduler: *sched
"#,
        cas = cas.display()
    )
}

impl Server {
    pub fn address(&self) -> String {
        format!("grpc://127.0.0.1:{}", self.port)
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
        let log = server.dir.join(format!("worker-{test}-{n}.log"));
        let f = std::fs::File::create(&log).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_forge-re-worker"));
        cmd.args(["--address", &server.address()])
            .args(["--property", "OSFamily=linux"])
            .args(["--property", &format!("test={test}")])
            .args(["--name", &format!("{test}-{n}")])
            .args(props.iter().flat_map(|p| ["--property", p]))
            .args(args)
            .stdin(Stdio::null())
            .stdout(f.try_clone().unwrap())
            .stderr(f);
        let child = die_with_parent(&mut cmd).spawn().unwrap();
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

    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.kill();
    }
}
