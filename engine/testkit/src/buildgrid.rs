//! Starts a real BuildGrid (`bgd`, pinned in tools/bootstrap/python/buildgrid) as a cache-only
//! REAPI server on 127.0.0.1 for one test, and always kills it again (also on panic).

use std::collections::BTreeMap;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use forge_reapi::{ClientOptions, Digest, RemoteCache};

pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `FORGE_BGD` (a bgd executable) or `.venv/buildgrid/bin/bgd`, created on first use from
/// the pinned requirements. When Python cannot make a venv the test fails, unless
/// `FORGE_ALLOW_MISSING` names `buildgrid`: then `None` (the caller returns).
pub fn bgd() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("FORGE_BGD") {
        return Some(PathBuf::from(p));
    }
    let root = workspace_root();
    let venv = root.join(".venv/buildgrid");
    let bgd = venv.join("bin/bgd");
    let _lock = VenvLock::take(&root.join(".venv/.buildgrid.lock"));
    if works(&bgd) {
        return Some(bgd);
    }
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_string());
    let have_python = Command::new(&python)
        .args(["-m", "venv", "--help"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !have_python {
        forge_allow_missing::missing(
            "buildgrid",
            &format!(
                "`{python} -m venv` is unavailable, so BuildGrid cannot be installed \
                 (set FORGE_BGD to a bgd executable, or install python3-venv)"
            ),
        );
        return None;
    }
    eprintln!("installing BuildGrid into {} ...", venv.display());
    let _ = std::fs::remove_dir_all(&venv);
    let ok = Command::new(&python)
        .arg("-m")
        .arg("venv")
        .arg(&venv)
        .status()
        .is_ok_and(|s| s.success())
        && Command::new(venv.join("bin/pip"))
            .args(["install", "--quiet", "-r"])
            .arg(root.join("tools/bootstrap/python/buildgrid/requirements.txt"))
            .status()
            .is_ok_and(|s| s.success());
    assert!(
        ok && works(&bgd),
        "installing BuildGrid from tools/bootstrap/python/buildgrid/requirements.txt failed"
    );
    Some(bgd)
}

/// pip installs the `bgd` entry point last, so its presence means a finished install
/// (running it would cost seconds of Python imports per test).
fn works(bgd: &Path) -> bool {
    bgd.exists()
}

/// Serialises venv creation across test processes: the lock is the open file's `flock`, held
/// until the value is dropped.
struct VenvLock {
    _locked: std::fs::File,
}

impl VenvLock {
    fn take(path: &Path) -> VenvLock {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let f = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(path)
            .unwrap();
        use std::os::fd::AsRawFd;
        // SAFETY: flock on a file descriptor we own.
        unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX) };
        VenvLock { _locked: f }
    }
}

/// At most this many servers at once per test binary: each is a Python process, and eight
/// of them starting together on a small machine take longer than running in waves.
const MAX_SERVERS: usize = 3;
static SERVERS: (std::sync::Mutex<usize>, std::sync::Condvar) =
    (std::sync::Mutex::new(0), std::sync::Condvar::new());

struct ServerSlot;

impl ServerSlot {
    fn take() -> ServerSlot {
        let mut n = SERVERS.0.lock().unwrap_or_else(|e| e.into_inner());
        while *n >= MAX_SERVERS {
            n = SERVERS.1.wait(n).unwrap_or_else(|e| e.into_inner());
        }
        *n += 1;
        ServerSlot
    }
}

impl Drop for ServerSlot {
    fn drop(&mut self) {
        *SERVERS.0.lock().unwrap_or_else(|e| e.into_inner()) -= 1;
        SERVERS.1.notify_one();
    }
}

pub struct BuildGrid {
    child: Option<Child>,
    _slot: ServerSlot,
    pub port: u16,
    pub dir: tempfile::TempDir,
    pub instance: String,
}

impl BuildGrid {
    /// A cache-only server (disk CAS, in-memory action cache accepting client updates).
    pub fn start() -> Option<BuildGrid> {
        Self::start_with_instance("")
    }

    pub fn start_with_instance(instance: &str) -> Option<BuildGrid> {
        Self::start_with(instance, None, None)
    }

    /// `tls`: (server certificate, server key) PEM files; the channel then requires TLS.
    /// `jwt_secret`: a file with an HS256 secret; requests then need `authorization: Bearer`.
    pub fn start_with(
        instance: &str,
        tls: Option<(&Path, &Path)>,
        jwt_secret: Option<&Path>,
    ) -> Option<BuildGrid> {
        let bgd = bgd()?;
        let slot = ServerSlot::take();
        let dir = tempfile::Builder::new()
            .prefix("forge-buildgrid-")
            .tempdir()
            .unwrap();
        let port = free_port();
        let config = dir.path().join("buildgrid.yml");
        let cas = dir.path().join("storage");
        std::fs::create_dir_all(&cas).unwrap();
        // The project's one BuildGrid configuration (engine/grid), without execution.
        let mut cfg = forge_re_grid::Config::cache_only(port, cas);
        cfg.instance = instance.to_string();
        cfg.max_cached_refs = 10_000;
        cfg.tls = tls.map(|(cert, key)| forge_re_grid::Tls {
            cert: cert.to_path_buf(),
            key: key.to_path_buf(),
        });
        cfg.jwt_secret = jwt_secret.map(Path::to_path_buf);
        std::fs::write(&config, cfg.render()).unwrap();
        let log = std::fs::File::create(dir.path().join("bgd.log")).unwrap();
        let child = Command::new(&bgd)
            .args(["server", "start"])
            .arg(&config)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            // Own process group, so the whole server (and anything it forks) is killed.
            .process_group(0)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {}: {e}", bgd.display()));
        let mut server = BuildGrid {
            child: Some(child),
            _slot: slot,
            port,
            dir,
            instance: instance.to_string(),
        };
        server.wait_ready();
        Some(server)
    }

    fn wait_ready(&mut self) {
        let log = self.dir.path().join("bgd.log");
        let child = self.child.as_mut().unwrap();
        forge_re_grid::listen::wait_listening(child, ("127.0.0.1", self.port), "bgd", &log, None)
            .unwrap_or_else(|e| panic!("{e:#}"));
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("bgd.log")).unwrap_or_default()
    }

    pub fn address(&self) -> String {
        format!("grpc://127.0.0.1:{}", self.port)
    }

    /// The `[buck2_re_client]` section a user would write for this server.
    pub fn section(&self) -> BTreeMap<String, String> {
        let mut s = BTreeMap::new();
        s.insert("address".to_string(), self.address());
        s.insert("tls".to_string(), "false".to_string());
        if !self.instance.is_empty() {
            s.insert("instance_name".to_string(), self.instance.clone());
        }
        s
    }

    pub fn client(&self) -> std::sync::Arc<dyn RemoteCache> {
        self.client_with(ClientOptions::default())
    }

    pub fn client_with(&self, opts: ClientOptions) -> std::sync::Arc<dyn RemoteCache> {
        forge_reapi::from_buckconfig(&self.section(), opts)
            .expect("connecting to BuildGrid")
            .expect("a configured cache")
    }

    /// Where BuildGrid's disk storage keeps a blob.
    pub fn blob_path(&self, d: &Digest) -> PathBuf {
        self.dir
            .path()
            .join("storage/cas/objects")
            .join(&d.hash[..2])
            .join(&d.hash[2..])
    }

    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            // SAFETY: signalling the process group of a child this harness spawned.
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
        }
    }
}

impl Drop for BuildGrid {
    fn drop(&mut self) {
        self.kill();
    }
}

fn free_port() -> u16 {
    forge_re_grid::listen::free_port().unwrap()
}
