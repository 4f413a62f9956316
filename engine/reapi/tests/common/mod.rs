//! Starts a real BuildGrid (`bgd`, pinned in tools/bootstrap/python/buildgrid) as a cache-only
//! REAPI server on 127.0.0.1 for one test, and always kills it again (also on panic).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::Write;
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

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

/// Serialises venv creation across test processes.
struct VenvLock(std::fs::File);

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
        VenvLock(f)
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
        std::fs::write(
            &config,
            format!(
                r#"server:
  - !channel
    address: "127.0.0.1:{port}"
{channel_security}
authorization:
{authorization}
storages:
  - !disk-storage &cas
    path: {cas}
caches:
  - !lru-action-cache &ac
    storage: *cas
    max-cached-refs: 10000
    allow-updates: true
    cache-failed-actions: false
instances:
  - name: "{instance}"
    services:
      - !action-cache
        cache: *ac
      - !cas
        storage: *cas
      - !bytestream
        storage: *cas
"#,
                cas = cas.display(),
                authorization = match jwt_secret {
                    None => "  method: none".to_string(),
                    Some(secret) => format!(
                        "  method: jwt\n  secret: {}\n  algorithm: hs256",
                        secret.display()
                    ),
                },
                channel_security = match tls {
                    None => "    insecure-mode: true".to_string(),
                    Some((cert, key)) => format!(
                        "    insecure-mode: false\n    credentials:\n      tls-server-key: {}\n      tls-server-cert: {}",
                        key.display(),
                        cert.display()
                    ),
                }
            ),
        )
        .unwrap();
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
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.as_mut().unwrap().try_wait().unwrap() {
                panic!("bgd exited early ({status}); log:\n{}", self.log());
            }
            if TcpStream::connect(("127.0.0.1", self.port)).is_ok() {
                return;
            }
            if start.elapsed() > Duration::from_secs(90) {
                panic!("bgd did not listen within 90 s; log:\n{}", self.log());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
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
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A file of `size` pseudo-random bytes, written in chunks (never held whole in memory).
pub fn write_random_file(path: &Path, size: u64, seed: u64) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut buf = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        for b in buf.iter_mut() {
            // xorshift64: cheap, deterministic filler that does not compress.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        let n = left.min(buf.len() as u64) as usize;
        f.write_all(&buf[..n]).unwrap();
        left -= n as u64;
    }
    f.flush().unwrap();
}

/// SHA-256 by an independent implementation (coreutils), to check our own digests.
pub fn sha256sum(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()[..64].to_string()
}

/// Peak resident memory (VmHWM) of this process in KiB.
pub fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// A throwaway CA and a server certificate for localhost/127.0.0.1 signed by it, made with
/// the openssl CLI. Without openssl the test fails, unless `FORGE_ALLOW_MISSING` names
/// `openssl`: then `None` (the caller returns).
pub fn make_certs(dir: &Path) -> Option<(PathBuf, PathBuf, PathBuf)> {
    let ca_key = dir.join("ca.key");
    let ca = dir.join("ca.pem");
    let key = dir.join("server.key");
    let csr = dir.join("server.csr");
    let cert = dir.join("server.pem");
    let ext = dir.join("ext.cnf");
    std::fs::write(&ext, "subjectAltName=DNS:localhost,IP:127.0.0.1\n").unwrap();
    let run = |args: &[&str]| {
        Command::new("openssl")
            .args(args)
            .current_dir(dir)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    let ok = run(&[
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=forge test CA",
    ]) && run(&[
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=localhost",
    ]) && run(&[
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "ext.cnf",
    ]);
    let _ = (&ca_key, &csr);
    if !ok {
        forge_allow_missing::missing(
            "openssl",
            "the openssl CLI cannot make a test certificate, so TLS is not tested",
        );
        return None;
    }
    Some((ca, cert, key))
}

/// A TCP proxy in front of the server that breaks the connection once, after `cut_after`
/// bytes have flowed in one direction: a flaky network for resume/retry tests.
pub struct FlakyProxy {
    pub port: u16,
    cut: std::sync::Arc<std::sync::atomic::AtomicBool>,
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    ToServer,
    ToClient,
}

impl FlakyProxy {
    pub fn start(upstream: u16, direction: Direction, cut_after: u64) -> FlakyProxy {
        use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
        use std::sync::Arc;
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let cut = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let counted = Arc::new(AtomicU64::new(0));
        let (cut2, stop2) = (cut.clone(), stop.clone());
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stop2.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(client) = conn else { continue };
                let Ok(server) = TcpStream::connect(("127.0.0.1", upstream)) else {
                    continue;
                };
                for (from, to, dir) in [
                    (
                        client.try_clone().unwrap(),
                        server.try_clone().unwrap(),
                        Direction::ToServer,
                    ),
                    (server, client, Direction::ToClient),
                ] {
                    let (cut, counted) = (cut2.clone(), counted.clone());
                    std::thread::spawn(move || {
                        pump(from, to, dir == direction, cut_after, &cut, &counted)
                    });
                }
            }
        });
        FlakyProxy { port, cut, stop }
    }

    pub fn did_cut(&self) -> bool {
        self.cut.load(std::sync::atomic::Ordering::SeqCst)
    }
}

fn pump(
    mut from: TcpStream,
    mut to: TcpStream,
    counting: bool,
    cut_after: u64,
    cut: &std::sync::atomic::AtomicBool,
    counted: &std::sync::atomic::AtomicU64,
) {
    use std::io::Read;
    use std::sync::atomic::Ordering;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if counting && !cut.load(Ordering::SeqCst) {
            let total = counted.fetch_add(n as u64, Ordering::SeqCst) + n as u64;
            if total > cut_after && !cut.swap(true, Ordering::SeqCst) {
                let _ = from.shutdown(std::net::Shutdown::Both);
                let _ = to.shutdown(std::net::Shutdown::Both);
                return;
            }
        }
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(std::net::Shutdown::Write);
}

impl Drop for FlakyProxy {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::SeqCst);
        // Wake the accept loop so its thread ends.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}
