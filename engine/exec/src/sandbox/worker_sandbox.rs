//! The persistent sandbox (forge's default): one bubblewrap per executor worker thread,
//! started on the thread's first action and kept for the rest of the build, with a small
//! server inside it ([`serve`], the `forge-sandbox` binary or `forge __sandbox-worker`)
//! that runs each action in fresh mount, PID and IPC namespaces of its own. Starting
//! bubblewrap (a user and network namespace, a new root, `/proc`, `/dev`) is what made a
//! fresh bubblewrap per action cost 10–25 ms; a clone into new namespaces inside the running
//! one costs well under a millisecond (README, "Benchmarks").
//!
//! Lifetime and kill semantics are those of `procs`: the bubblewrap leads a process group
//! forge tracks (killed on SIGINT/SIGTERM/SIGHUP, reaped after a `kill -9` of forge, killed
//! when the worker thread ends), bubblewrap's `--die-with-parent` takes the worker with it,
//! and each action's PID namespace takes the action's processes with it when it ends.
//!
//! When a worker dies, the action it was running fails with an error that says so; a worker
//! found dead before it took an action is replaced and the action runs in the new one.

mod wire;

pub mod serve;

use std::fs;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{bail, Context, Result};

use wire::{read_frame, Reply};
pub use wire::{Bind, Request};

use crate::procs::{spawn_tracked, Group};

/// Where the worker program is mounted inside its bubblewrap.
const WORKER_PATH: &str = "/.forge-sandbox";

/// The argument that makes the `forge` binary serve as its own sandbox worker.
pub const SELF_WORKER_ARG: &str = "__sandbox-worker";

/// Set once the running binary can serve as the worker (see [`entry_point`]).
static SELF_SERVES: AtomicBool = AtomicBool::new(false);

/// Called first thing in a binary's `main`: when the binary was started as the sandbox
/// worker (`<binary> __sandbox-worker --serve FD ...`) it serves and never returns;
/// otherwise it records that this binary can be its own worker.
pub fn entry_point() {
    if std::env::args().nth(1).as_deref() == Some(SELF_WORKER_ARG) {
        serve::main();
    }
    SELF_SERVES.store(true, Ordering::SeqCst);
}

/// How to start the worker program: the binary itself when it called [`entry_point`], else
/// `forge-sandbox` next to it (or next to its `deps/` directory, where cargo puts test and
/// benchmark binaries).
#[derive(Clone, Debug)]
pub struct Program {
    pub path: PathBuf,
    pub args: Vec<String>,
}

impl Program {
    pub fn find() -> Result<Program> {
        let exe = std::env::current_exe().context("locating the running binary")?;
        if SELF_SERVES.load(Ordering::SeqCst) {
            return Ok(Program {
                path: exe,
                args: vec![SELF_WORKER_ARG.to_string()],
            });
        }
        let dir = exe.parent().unwrap_or(Path::new("/"));
        let mut candidates = vec![dir.join("forge-sandbox")];
        if dir.file_name().is_some_and(|n| n == "deps") {
            candidates.extend(dir.parent().map(|d| d.join("forge-sandbox")));
        }
        match candidates.iter().find(|c| c.is_file()) {
            Some(p) => Ok(Program {
                path: p.clone(),
                args: Vec::new(),
            }),
            None => bail!(
                "forge's persistent sandbox worker `forge-sandbox` is not next to `{}`: build it with `cargo build -p forge_exec --bin forge-sandbox` (same profile), or run with `-c forge.sandbox=bwrap-per-action`",
                exe.display()
            ),
        }
    }
}

/// What every worker of one build shares.
pub struct Spec<'a> {
    pub bwrap: &'a Path,
    pub program: &'a Program,
    pub root: &'a Path,
    /// bubblewrap's arguments for the system part of the view (`/usr`, `/etc`, `$HOME`, ...).
    pub system_args: Vec<String>,
    /// Project-relative paths the actions may write (`[forge] sandbox_passthrough`).
    pub writable: Vec<String>,
    pub procs_dir: &'a Path,
    pub sandbox_dir: &'a Path,
}

/// How an action ended in the worker.
pub enum Outcome {
    Exited(ExitStatus),
    /// The program could not be started (`execve` failed).
    ExecFailed(io::Error),
    /// The action's namespaces or mounts could not be set up; nothing ran.
    SetupFailed(String),
    /// The worker died while the action ran.
    WorkerDied(String),
}

/// One running worker: its bubblewrap (a tracked process group) and its socket.
struct Worker {
    child: Child,
    group: Option<Group>,
    sock: UnixStream,
    stderr: fs::File,
}

/// Whether a run reached the point where the action may have started.
enum Lost {
    BeforeAccepted(String),
    AfterAccepted(String),
}

impl Worker {
    fn start(spec: &Spec, network: bool) -> Result<Worker> {
        fs::create_dir_all(spec.sandbox_dir)
            .with_context(|| format!("creating `{}`", spec.sandbox_dir.display()))?;
        let (ours, theirs) = UnixStream::pair().context("creating the sandbox worker's socket")?;
        let root = spec.root.to_string_lossy().into_owned();
        let mut args: Vec<String> = vec!["--die-with-parent".into(), "--unshare-all".into()];
        if network {
            args.push("--share-net".into());
        }
        // What the worker needs to build each action's view, and no more.
        args.extend(["--cap-add", "CAP_SYS_ADMIN", "--cap-add", "CAP_SETPCAP"].map(String::from));
        args.extend(spec.system_args.iter().cloned());
        args.extend(["--ro-bind".into(), root.clone(), root.clone()]);
        let sandboxes = spec.sandbox_dir.to_string_lossy().into_owned();
        args.extend(["--bind".into(), sandboxes.clone(), sandboxes]);
        for p in &spec.writable {
            let real = spec.root.join(p);
            if real.exists() {
                // A passthrough that is a symlink (a `.venv` shared by two checkouts) is
                // mounted where it points: the link itself comes with the root's bind, and a
                // mount onto it would land on its missing target.
                let real = fs::canonicalize(&real).unwrap_or(real);
                let real = real.to_string_lossy().into_owned();
                args.extend(["--bind".into(), real.clone(), real]);
            }
        }
        // At a path of bubblewrap's own root, not the program's: a mount on a project file
        // (`target/release/forge`) would make that file impossible to replace for every
        // action (a mount point cannot be unlinked in any view of the namespace).
        let program = spec.program.path.to_string_lossy().into_owned();
        args.extend(["--ro-bind".into(), program, WORKER_PATH.into()]);
        args.extend([
            "--chdir".into(),
            "/".into(),
            "--".into(),
            WORKER_PATH.into(),
        ]);
        args.extend(spec.program.args.iter().cloned());
        args.extend(["--serve".into(), "3".into(), "--root".into(), root]);
        let stderr = memfd("forge-sandbox-stderr")?;
        let mut cmd = Command::new(spec.bwrap);
        cmd.args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr.try_clone()?);
        let fd: RawFd = theirs.as_raw_fd();
        // SAFETY: dup2 and prctl are async-signal-safe; the socket end becomes fd 3 (dup2
        // clears close-on-exec on the copy), and bubblewrap dies when the spawning thread
        // does, so a killed forge leaves no worker behind.
        unsafe {
            cmd.pre_exec(move || {
                // (dup2 onto itself keeps the flag, so fd 3 itself is cleared by hand.)
                let r = if fd == 3 {
                    libc::fcntl(3, libc::F_SETFD, 0)
                } else {
                    libc::dup2(fd, 3)
                };
                if r < 0 {
                    return Err(io::Error::last_os_error());
                }
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let (child, group) = spawn_tracked(&mut cmd, spec.procs_dir)
            .with_context(|| format!("starting `{}`", spec.bwrap.display()))?;
        drop(theirs);
        let mut worker = Worker {
            child,
            group: Some(group),
            sock: ours,
            stderr,
        };
        // The worker says it is ready once bubblewrap has set everything up.
        match read_frame(&mut worker.sock) {
            Ok(Some(f)) if Reply::decode(&f).ok() == Some(Reply::Accepted) => Ok(worker),
            _ => {
                let why = worker.death();
                bail!("forge's persistent sandbox did not start: {why} (bubblewrap must be able to give `CAP_SYS_ADMIN` inside its user namespace; `-c forge.sandbox=bwrap-per-action` runs a fresh bubblewrap per action instead)")
            }
        }
    }

    /// Why the worker is gone: its exit status and what it printed.
    fn death(&mut self) -> String {
        if let Some(g) = self.group.take() {
            g.finish();
        }
        let status = self.child.wait().map(|s| s.to_string()).unwrap_or_default();
        let text = String::from_utf8_lossy(&read_all(&mut self.stderr))
            .trim()
            .to_string();
        let tail: String = text
            .chars()
            .rev()
            .take(2000)
            .collect::<String>()
            .chars()
            .rev()
            .collect();
        if tail.is_empty() {
            format!("bubblewrap (pid {}) {status}", self.child.id())
        } else {
            format!("bubblewrap (pid {}) {status}: {tail}", self.child.id())
        }
    }

    fn run(&mut self, req: &[u8], out: RawFd, err: RawFd) -> Result<Reply, Lost> {
        if let Err(e) = send_request(&self.sock, req, out, err) {
            return Err(Lost::BeforeAccepted(format!("sending the action: {e}")));
        }
        match read_frame(&mut self.sock) {
            Ok(Some(f)) if Reply::decode(&f).ok() == Some(Reply::Accepted) => {}
            Ok(Some(_)) => return Err(Lost::AfterAccepted("an unexpected reply".into())),
            Ok(None) => return Err(Lost::BeforeAccepted("end of stream".into())),
            Err(e) => return Err(Lost::BeforeAccepted(e.to_string())),
        }
        match read_frame(&mut self.sock) {
            Ok(Some(f)) => Reply::decode(&f).map_err(|e| Lost::AfterAccepted(e.to_string())),
            Ok(None) => Err(Lost::AfterAccepted("end of stream".into())),
            Err(e) => Err(Lost::AfterAccepted(e.to_string())),
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if let Some(g) = self.group.take() {
            g.finish();
        }
        let _ = self.child.wait();
    }
}

fn memfd(name: &str) -> Result<fs::File> {
    use std::os::fd::FromRawFd;
    let c = std::ffi::CString::new(name).expect("no NUL in the name");
    // SAFETY: memfd_create takes a valid C string and returns a new descriptor we own.
    let fd = unsafe { libc::memfd_create(c.as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(io::Error::last_os_error()).context("memfd_create");
    }
    // SAFETY: `fd` is a fresh descriptor owned by nobody else.
    Ok(unsafe { fs::File::from_raw_fd(fd) })
}

fn read_all(f: &mut fs::File) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let mut bytes = Vec::new();
    if f.seek(SeekFrom::Start(0)).is_ok() {
        let _ = f.read_to_end(&mut bytes);
    }
    bytes
}

/// The frame header goes with the two stream descriptors, then the body.
fn send_request(sock: &UnixStream, body: &[u8], out: RawFd, err: RawFd) -> io::Result<()> {
    let header = (body.len() as u64).to_le_bytes();
    let fds = [out, err];
    let mut cmsg = [0u64; 8];
    // SAFETY: a zeroed msghdr is valid; the control buffer is large enough for two fds
    // (CMSG_SPACE(8) is 24 bytes) and aligned for cmsghdr.
    unsafe {
        let mut iov = libc::iovec {
            iov_base: header.as_ptr() as *mut _,
            iov_len: header.len(),
        };
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cmsg.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(8) as _;
        let c = libc::CMSG_FIRSTHDR(&msg);
        (*c).cmsg_level = libc::SOL_SOCKET;
        (*c).cmsg_type = libc::SCM_RIGHTS;
        (*c).cmsg_len = libc::CMSG_LEN(8) as _;
        std::ptr::copy_nonoverlapping(fds.as_ptr(), libc::CMSG_DATA(c).cast::<RawFd>(), 2);
        let n = loop {
            let n = libc::sendmsg(sock.as_raw_fd(), &msg, libc::MSG_NOSIGNAL);
            if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                break n;
            }
        };
        if n < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut w = sock;
        std::io::Write::write_all(&mut w, &header[n as usize..])?;
        std::io::Write::write_all(&mut w, body)
    }
}

/// The persistent sandboxes of one executor worker thread: one without network and, when
/// an action asks for the network, one with it. Dropped (and killed) with the thread's state.
#[derive(Default)]
pub struct Workers {
    slots: [Option<Worker>; 2],
}

impl Workers {
    /// Runs one action; starts (or replaces) the worker as needed.
    pub fn run(
        &mut self,
        spec: &Spec,
        network: bool,
        req: &Request,
        out: &fs::File,
        err: &fs::File,
    ) -> Result<Outcome> {
        let body = req.encode();
        let slot = &mut self.slots[usize::from(network)];
        loop {
            let fresh = slot.is_none();
            if fresh {
                *slot = Some(Worker::start(spec, network)?);
            }
            let worker = slot.as_mut().expect("started above");
            match worker.run(&body, out.as_raw_fd(), err.as_raw_fd()) {
                Ok(Reply::Exited(s)) => return Ok(Outcome::Exited(ExitStatus::from_raw(s))),
                Ok(Reply::ExecFailed(e)) => {
                    return Ok(Outcome::ExecFailed(io::Error::from_raw_os_error(e)))
                }
                Ok(Reply::SetupFailed(m)) => return Ok(Outcome::SetupFailed(m)),
                Ok(Reply::Accepted) => {
                    let why = worker.death();
                    *slot = None;
                    return Ok(Outcome::WorkerDied(format!(
                        "{why} (it answered out of turn)"
                    )));
                }
                // Nothing of the action ran: a worker that died since its last action is
                // replaced once; a fresh one that cannot take an action is an error.
                Err(Lost::BeforeAccepted(e)) => {
                    let why = worker.death();
                    *slot = None;
                    if fresh {
                        bail!("forge's persistent sandbox died before it took the action ({e}): {why}");
                    }
                }
                Err(Lost::AfterAccepted(e)) => {
                    let why = worker.death();
                    *slot = None;
                    return Ok(Outcome::WorkerDied(format!("{why} ({e})")));
                }
            }
        }
    }
}
