//! The worker's side (the `forge-sandbox` binary, started inside one bubblewrap per executor
//! worker): it reads action requests from its socket and runs each in a sandbox of its own.
//!
//! Per action it clones a child into new mount, PID and IPC namespaces (bubblewrap gave the
//! worker `CAP_SYS_ADMIN` in its user namespace for exactly this). That child, PID 1 of the
//! action's namespace, mounts a fresh `/tmp`, `/dev/shm` and `/proc`, a fresh tmpfs at the
//! project root's path holding only the request's binds (then remounted read-only), drops
//! every capability for good (bounding set, ambient set, `no_new_privs`), and forks the
//! command. When the command exits, PID 1 reports its status and exits, and the kernel
//! kills whatever the action left running in its PID namespace (a daemon that called
//! `setsid` included), before the worker answers forge.
//!
//! The worker is single-threaded, so the code after `clone`/`fork` may allocate.

use std::ffi::CString;
use std::io::{self, Read, Write};
use std::os::fd::{FromRawFd, RawFd};
use std::os::unix::net::UnixStream;

use super::wire::{read_body, write_frame, Bind, Reply, Request};

mod syscalls;
use syscalls::*;

/// `forge-sandbox --serve FD --root ROOT`: serves requests on FD until forge closes it.
/// (`--root` only names the project, so a worker can be told apart in a process list.)
pub fn main() -> ! {
    let args: Vec<String> = std::env::args().collect();
    let fd: RawFd = match args.iter().position(|a| a == "--serve") {
        Some(i) => args.get(i + 1).and_then(|v| v.parse().ok()).unwrap_or(-1),
        None => -1,
    };
    if fd < 0 {
        eprintln!("forge-sandbox: the persistent sandbox of forge's executor; forge starts it inside bubblewrap (`forge-sandbox --serve FD --root ROOT`), it is not run by hand");
        std::process::exit(2);
    }
    // SAFETY: forge passed this descriptor open; nothing else owns it.
    let sock = unsafe { UnixStream::from_raw_fd(fd) };
    let last_cap = std::fs::read_to_string("/proc/sys/kernel/cap_last_cap")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(63);
    // Mounts made for an action must never propagate back into this namespace.
    // SAFETY: plain mount(2) call with valid C strings.
    if unsafe {
        libc::mount(
            std::ptr::null(),
            c"/".as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    } != 0
    {
        eprintln!(
            "forge-sandbox: cannot make mounts private: {}",
            io::Error::last_os_error()
        );
        std::process::exit(3);
    }
    let code = match serve(sock, last_cap) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("forge-sandbox: {e}");
            4
        }
    };
    std::process::exit(code)
}

fn serve(mut sock: UnixStream, last_cap: i32) -> io::Result<()> {
    // Ready: bubblewrap has built the worker's view.
    write_frame(&mut sock, &Reply::Accepted.encode())?;
    // Inits of answered actions: each is still tearing its namespaces down (unmounting its
    // mount tree waits for an RCU grace period), which need not delay the next action.
    let mut exiting: Vec<i32> = Vec::new();
    loop {
        exiting.retain(|&pid| !reaped_if_done(pid));
        let Some((header, fds)) = recv_header(&sock)? else {
            for pid in exiting {
                reap(pid);
            }
            return Ok(());
        };
        let body = read_body(&mut sock, header)?;
        let reply = match (Request::decode(&body), fds) {
            (Ok(req), Some((out, err))) => {
                write_frame(&mut sock, &Reply::Accepted.encode())?;
                let (reply, init) = run(&req, out, err, last_cap);
                // SAFETY: the descriptors came with this request and are ours alone.
                unsafe {
                    libc::close(out);
                    libc::close(err);
                }
                write_frame(&mut sock, &reply.encode())?;
                exiting.extend(init);
                continue;
            }
            (Err(e), _) => Reply::SetupFailed(e.to_string()),
            (_, None) => Reply::SetupFailed("the request carried no stream descriptors".into()),
        };
        write_frame(&mut sock, &reply.encode())?;
    }
}

/// A request's frame header and the stdout/stderr descriptors that came with it.
type Header = ([u8; 8], Option<(RawFd, RawFd)>);

/// Reads a frame header and the two descriptors sent with it; `None` at end of stream.
fn recv_header(sock: &UnixStream) -> io::Result<Option<Header>> {
    use std::os::fd::AsRawFd;
    let mut header = [0u8; 8];
    let mut cmsg = [0u64; 8];
    let mut iov = libc::iovec {
        iov_base: header.as_mut_ptr().cast(),
        iov_len: header.len(),
    };
    // SAFETY: a zeroed msghdr is valid; the buffers outlive the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cmsg.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&cmsg) as _;
    let n = loop {
        // SAFETY: msg points at valid buffers.
        let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
        if n >= 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            break n;
        }
    };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    if n == 0 {
        return Ok(None);
    }
    let mut fds = None;
    // SAFETY: walking the control buffer the kernel filled, with the libc macros.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_RIGHTS {
                let data = libc::CMSG_DATA(c).cast::<RawFd>();
                let count = ((*c).cmsg_len as usize - libc::CMSG_LEN(0) as usize) / 4;
                if count == 2 {
                    fds = Some((data.read_unaligned(), data.add(1).read_unaligned()));
                } else {
                    for i in 0..count {
                        libc::close(data.add(i).read_unaligned());
                    }
                }
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    let mut got = n as usize;
    let mut reader = sock;
    while got < header.len() {
        let m = reader.read(&mut header[got..])?;
        if m == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        got += m;
    }
    Ok(Some((header, fds)))
}

fn errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

fn cstr(bytes: &[u8]) -> Result<CString, String> {
    CString::new(bytes).map_err(|_| {
        format!(
            "`{}` contains a NUL byte",
            String::from_utf8_lossy(bytes).escape_debug()
        )
    })
}

/// Runs one request in fresh namespaces and waits for it (and everything it started).
/// Returns the action's init process when it is still to be reaped: it reports once the
/// action's processes are gone, and its namespaces are torn down while forge goes on.
fn run(req: &Request, out: RawFd, err: RawFd, last_cap: i32) -> (Reply, Option<i32>) {
    let mut report = [0 as RawFd; 2];
    // SAFETY: pipe2 fills the array.
    if unsafe { libc::pipe2(report.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return (
            Reply::SetupFailed(format!("pipe: {}", io::Error::last_os_error())),
            None,
        );
    }
    let flags = libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWIPC | libc::SIGCHLD;
    // SAFETY: clone without a new stack behaves as fork; the worker is single-threaded.
    let pid = unsafe { libc::syscall(libc::SYS_clone, flags as libc::c_ulong, 0, 0, 0, 0) };
    if pid < 0 {
        let e = io::Error::last_os_error();
        // SAFETY: closing the pipe we made.
        unsafe {
            libc::close(report[0]);
            libc::close(report[1]);
        }
        return (
            Reply::SetupFailed(format!("clone(CLONE_NEWNS | CLONE_NEWPID): {e}")),
            None,
        );
    }
    if pid == 0 {
        // SAFETY: the child's own copy of the read end.
        unsafe { libc::close(report[0]) };
        let reply = action_init(req, out, err, last_cap);
        // SAFETY: the report pipe's write end is this process's.
        let mut pipe = unsafe { std::fs::File::from_raw_fd(report[1]) };
        let _ = pipe.write_all(&reply.encode());
        // Closed now, so the worker need not wait for this process's exit to read it.
        drop(pipe);
        // SAFETY: leaving the child without running the parent's exit handlers.
        unsafe { libc::_exit(0) };
    }
    // SAFETY: the parent's copy of the write end.
    unsafe { libc::close(report[1]) };
    // SAFETY: the read end is this process's.
    let mut pipe = unsafe { std::fs::File::from_raw_fd(report[0]) };
    let mut bytes = Vec::new();
    let _ = pipe.read_to_end(&mut bytes);
    if bytes.is_empty() {
        let status = reap(pid as i32);
        return (
            Reply::SetupFailed(format!(
                "the action's sandbox init ended without a report (wait status {status:#x})"
            )),
            None,
        );
    }
    let reply = Reply::decode(&bytes).unwrap_or_else(|e| Reply::SetupFailed(e.to_string()));
    (reply, Some(pid as i32))
}

/// Reaps a child if it has exited; whether it had.
fn reaped_if_done(pid: i32) -> bool {
    // SAFETY: polling a child of this process.
    unsafe { libc::waitpid(pid, std::ptr::null_mut(), libc::WNOHANG) == pid }
}

/// Waits for a child; its wait status.
fn reap(pid: i32) -> i32 {
    let mut status = 0;
    // SAFETY: waiting for a child of this process.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 && errno() == libc::EINTR {}
    status
}

/// PID 1 of the action's namespaces: sets up its view, drops capabilities, runs the command.
fn action_init(req: &Request, out: RawFd, err: RawFd, last_cap: i32) -> Reply {
    // SAFETY: prctl with constant arguments: die with the worker.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) };
    if let Err(e) = setup_mounts(req) {
        return Reply::SetupFailed(e);
    }
    if let Err(e) = drop_capabilities(last_cap) {
        return Reply::SetupFailed(e);
    }
    let prepared = match Prepared::new(req) {
        Ok(p) => p,
        Err(e) => return Reply::SetupFailed(e),
    };
    let mut exec_err = [0 as RawFd; 2];
    // SAFETY: pipe2 fills the array.
    if unsafe { libc::pipe2(exec_err.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Reply::SetupFailed(format!("pipe: {}", io::Error::last_os_error()));
    }
    // SAFETY: fork in a single-threaded process.
    let child = unsafe { libc::fork() };
    if child < 0 {
        return Reply::SetupFailed(format!("fork: {}", io::Error::last_os_error()));
    }
    if child == 0 {
        prepared.exec(out, err, exec_err[1]);
    }
    // SAFETY: the parent's copy of the write end.
    unsafe { libc::close(exec_err[1]) };
    // SAFETY: the read end is this process's.
    let mut pipe = unsafe { std::fs::File::from_raw_fd(exec_err[0]) };
    let mut code = [0u8; 4];
    let exec_failed = pipe.read_exact(&mut code).is_ok();
    loop {
        let mut status = 0;
        // SAFETY: reaping children (PID 1 inherits every orphan of the action).
        let w = unsafe { libc::waitpid(-1, &mut status, 0) };
        if w == child {
            // Whatever the command left behind dies now and is reaped, so the result goes
            // out only when nothing of the action is alive; the namespaces themselves are
            // torn down after the reply (see `serve`).
            // SAFETY: PID 1 signalling every other process of its own namespace.
            unsafe { libc::kill(-1, libc::SIGKILL) };
            // SAFETY: reaping until no child is left.
            while unsafe { libc::waitpid(-1, std::ptr::null_mut(), 0) } > 0
                || errno() == libc::EINTR
            {}
            return if exec_failed {
                Reply::ExecFailed(i32::from_le_bytes(code))
            } else {
                Reply::Exited(status)
            };
        }
        if w < 0 && errno() != libc::EINTR {
            return Reply::SetupFailed(format!("waitpid: {}", io::Error::last_os_error()));
        }
    }
}

/// The command's argv, environment and program path, made before forking.
struct Prepared {
    argv: Vec<CString>,
    env: Vec<CString>,
    candidates: Vec<CString>,
    cwd: CString,
}

impl Prepared {
    fn new(req: &Request) -> Result<Prepared, String> {
        let argv: Vec<CString> = req.argv.iter().map(|a| cstr(a)).collect::<Result<_, _>>()?;
        let env: Vec<CString> = req.env.iter().map(|e| cstr(e)).collect::<Result<_, _>>()?;
        let program = req.argv.first().ok_or("the request has an empty argv")?;
        // As execvp does, with the action's own PATH: a name without `/` is looked up.
        let candidates = if program.contains(&b'/') {
            vec![cstr(program)?]
        } else {
            let path = req
                .env
                .iter()
                .find_map(|e| e.strip_prefix(b"PATH="))
                .unwrap_or(b"/usr/local/bin:/usr/bin:/bin");
            path.split(|b| *b == b':')
                .map(|dir| {
                    let dir = if dir.is_empty() { b"." as &[u8] } else { dir };
                    let mut p = dir.to_vec();
                    p.push(b'/');
                    p.extend_from_slice(program);
                    cstr(&p)
                })
                .collect::<Result<_, _>>()?
        };
        Ok(Prepared {
            argv,
            env,
            candidates,
            cwd: cstr(&req.root)?,
        })
    }

    /// In the forked child: the streams, a clean signal state, then execve. On failure the
    /// errno goes to `report` (close-on-exec, so a successful exec closes it unwritten).
    fn exec(&self, out: RawFd, err: RawFd, report: RawFd) -> ! {
        let mut argv: Vec<*const libc::c_char> = self.argv.iter().map(|a| a.as_ptr()).collect();
        argv.push(std::ptr::null());
        let mut envp: Vec<*const libc::c_char> = self.env.iter().map(|e| e.as_ptr()).collect();
        envp.push(std::ptr::null());
        // SAFETY: async-signal-safe calls on descriptors and memory this process owns.
        unsafe {
            let mut empty: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut empty);
            libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
            // Rust ignores SIGPIPE in the worker; the command gets the default, as from a shell.
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDONLY);
            if null < 0
                || libc::dup2(null, 0) < 0
                || libc::dup2(out, 1) < 0
                || libc::dup2(err, 2) < 0
                || libc::chdir(self.cwd.as_ptr()) != 0
            {
                fail_exec(report, errno());
            }
            // Nothing of the worker's reaches the command (a descriptor of the real project
            // root would be a way out).
            libc::syscall(
                libc::SYS_close_range,
                3,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            );
            let mut first_error = libc::ENOENT;
            for c in &self.candidates {
                libc::execve(c.as_ptr(), argv.as_ptr(), envp.as_ptr());
                let e = errno();
                if e != libc::ENOENT && e != libc::ENOTDIR && first_error == libc::ENOENT {
                    first_error = e;
                }
                if self.candidates.len() == 1 {
                    first_error = e;
                }
            }
            fail_exec(report, first_error)
        }
    }
}

fn fail_exec(report: RawFd, code: i32) -> ! {
    let bytes = code.to_le_bytes();
    // SAFETY: writing 4 bytes from a local buffer, then leaving without exit handlers.
    unsafe {
        libc::write(report, bytes.as_ptr().cast(), bytes.len());
        libc::_exit(127)
    }
}

/// The action's view: fresh `/tmp`, `/dev/shm` and `/proc`, and a read-only tmpfs at the
/// project root holding only the binds.
fn setup_mounts(req: &Request) -> Result<(), String> {
    let tmpfs = Some(c"tmpfs");
    let sticky = Some(c"mode=1777");
    // Handles on what the fresh mounts are about to cover: the real project tree (every
    // bind's source, reached through the working directory) and paths kept under /tmp.
    let root_fd = open_path(&req.root)?;
    let mut kept = Vec::new();
    for k in &req.keep_under_tmp {
        if let Ok(fd) = open_path(k) {
            kept.push((k, fd));
        }
    }
    // Binds from absolute paths (passthrough directories, resolved through their symlinks by
    // forge) may lie under /tmp or the project root, which the fresh mounts cover: each is
    // opened now and mounted from its descriptor.
    let mut absolute = Vec::new();
    for b in &req.binds {
        if b.src.first() == Some(&b'/') {
            let fd = open_path(&b.src).map_err(|e| format!("{e} (binding `{}`)", lossy(&b.src)))?;
            absolute.push(fd);
        }
    }
    let nosuid_nodev = libc::MS_NOSUID | libc::MS_NODEV;
    mount(tmpfs, &path_c(b"/tmp")?, tmpfs, nosuid_nodev, sticky)?;
    let shm = path_c(b"/dev/shm")?;
    if std::path::Path::new("/dev/shm").is_dir() {
        mount(tmpfs, &shm, tmpfs, nosuid_nodev, sticky)?;
    }
    for (path, fd) in kept {
        if is_dir_fd(fd) {
            mkdir_p(path)?;
        } else {
            mkdir_p(parent(path))?;
            touch(path)?;
        }
        mount(
            Some(fd_path(fd)?.as_c_str()),
            &path_c(path)?,
            None,
            libc::MS_BIND | libc::MS_REC,
            None,
        )?;
        // SAFETY: closing the handle just mounted from.
        unsafe { libc::close(fd) };
    }
    mkdir_p(&req.root)?;
    let root = path_c(&req.root)?;
    mount(tmpfs, &root, tmpfs, nosuid_nodev, Some(c"mode=755"))?;
    fchdir(root_fd)?;
    let mut absolute = absolute.into_iter();
    for b in &req.binds {
        if b.src.first() == Some(&b'/') {
            let fd = absolute.next().expect("one descriptor per absolute source");
            bind(req, b, &fd_path(fd)?)?;
            // SAFETY: closing the handle just mounted from.
            unsafe { libc::close(fd) };
        } else {
            bind(req, b, &path_c(&b.src)?)?;
        }
    }
    // SAFETY: closing the handle on the real tree before anything of the action runs.
    unsafe { libc::close(root_fd) };
    mount(
        None,
        &root,
        None,
        libc::MS_REMOUNT | libc::MS_RDONLY | nosuid_nodev,
        None,
    )?;
    let proc_ = path_c(b"/proc")?;
    mount(
        Some(c"proc"),
        &proc_,
        Some(c"proc"),
        nosuid_nodev | libc::MS_NOEXEC,
        None,
    )?;
    // As bubblewrap does: the kernel knobs of the fresh /proc stay read-only.
    for sub in ["sys", "sysrq-trigger", "irq", "bus"] {
        let p = format!("/proc/{sub}");
        if std::path::Path::new(&p).exists() {
            let c = path_c(p.as_bytes())?;
            mount(
                Some(c.as_c_str()),
                &c,
                None,
                libc::MS_BIND | libc::MS_REC,
                None,
            )?;
            make_read_only(&c)?;
        }
    }
    // SAFETY: chdir with a valid C string (the working directory no longer is the real tree).
    if unsafe { libc::chdir(root.as_ptr()) } != 0 {
        return Err(os_err("chdir", &req.root));
    }
    Ok(())
}

/// One bind of `b.src` (`from`: relative to the real project root, the working directory, or
/// a descriptor's path) at `dst` below the fresh root.
fn bind(req: &Request, b: &Bind, from: &CString) -> Result<(), String> {
    let dst = join(&req.root, &b.dst);
    mkdir_p(parent(&dst))?;
    if b.dir {
        mkdir_one(&dst)?;
    } else {
        touch(&dst)?;
    }
    let dst = path_c(&dst)?;
    mount(Some(from.as_c_str()), &dst, None, libc::MS_BIND, None)
        .map_err(|e| format!("{e} (binding `{}`)", lossy(&b.src)))?;
    if !b.writable {
        make_read_only(&dst)?;
    }
    Ok(())
}

/// No capability survives into the command: not in its sets, not in the bounding set it
/// could regain on exec as uid 0, not through setuid binaries.
fn drop_capabilities(last_cap: i32) -> Result<(), String> {
    // SAFETY: prctl/capset with constant arguments and a local struct.
    unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL,
            0,
            0,
            0,
        );
        for cap in 0..=last_cap {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 && errno() != libc::EINVAL {
                return Err(format!(
                    "dropping capability {cap} from the bounding set: {}",
                    io::Error::last_os_error()
                ));
            }
        }
        if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
            return Err(format!("no_new_privs: {}", io::Error::last_os_error()));
        }
        #[repr(C)]
        struct Header {
            version: u32,
            pid: i32,
        }
        #[repr(C)]
        #[derive(Clone, Copy)]
        struct Data {
            effective: u32,
            permitted: u32,
            inheritable: u32,
        }
        let header = Header {
            version: 0x2008_0522, // _LINUX_CAPABILITY_VERSION_3
            pid: 0,
        };
        let data = [Data {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(libc::SYS_capset, &header, data.as_ptr()) != 0 {
            return Err(format!("capset: {}", io::Error::last_os_error()));
        }
    }
    Ok(())
}
