//! Waiting for a fresh bubblewrap's PID namespace to be gone.
//!
//! bubblewrap's monitor process exits as soon as the namespace's PID 1 has reported the
//! command's status, which is before PID 1 itself has exited, and the kernel kills the rest
//! of a PID namespace (a daemon that called `setsid`, out of reach of the process group) only
//! while its PID 1 exits. Forge must not hash and cache the outputs while such a process
//! can still write them, so after bubblewrap exits it waits for that PID 1: bubblewrap names
//! it on `--json-status-fd` (`{ "child-pid": N }`, bubblewrap 0.8.0 `bwrap.1`), and a pidfd
//! on it becomes readable once it has exited, which the kernel makes happen only after every
//! other process of the namespace is gone.

use std::fs::File;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

/// The read end of a `--json-status-fd` pipe, whose write end goes to bubblewrap.
pub(crate) struct StatusPipe {
    read: File,
    write: Option<OwnedFd>,
}

impl StatusPipe {
    pub(crate) fn new() -> std::io::Result<Self> {
        let mut fds = [0 as RawFd; 2];
        // SAFETY: pipe2 fills the array; both ends start close-on-exec.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: the descriptors were just created and are owned here alone.
        let (read, write) = unsafe { (File::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        Ok(StatusPipe {
            read,
            write: Some(write),
        })
    }

    /// The descriptor number bubblewrap is told to write to (`--json-status-fd N`).
    pub(crate) fn child_fd(&self) -> RawFd {
        self.write.as_ref().map_or(-1, |w| w.as_raw_fd())
    }

    /// Makes the write end survive `exec` in the child only (it stays close-on-exec here, so
    /// no other command forge starts meanwhile inherits it), and gives up this process's copy
    /// when the command is dropped.
    pub(crate) fn pass_to(&mut self, cmd: &mut std::process::Command) {
        use std::os::unix::process::CommandExt;
        let Some(write) = self.write.take() else {
            return;
        };
        // SAFETY: fcntl is async-signal-safe; it changes the child's copy of the descriptor.
        unsafe {
            cmd.pre_exec(move || {
                if libc::fcntl(write.as_raw_fd(), libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }

    /// After bubblewrap has exited: waits (at most `limit`) until its namespace's PID 1 and
    /// with it every process of the namespace is gone. Returns false when it was still there
    /// at the limit.
    pub(crate) fn wait_namespace_gone(mut self, limit: Duration) -> bool {
        let mut text = String::new();
        // bubblewrap has exited, so this reads to the end of what it wrote.
        let _ = (&mut self.read).take(4096).read_to_string(&mut text);
        let Some(pid) = child_pid(&text) else {
            return true; // bubblewrap failed before it started a namespace
        };
        // SAFETY: pidfd_open takes a pid and flags and returns a new descriptor or -1.
        let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) } as RawFd;
        if fd < 0 {
            return true; // ESRCH: already exited and reaped
        }
        // SAFETY: the descriptor was just returned to us.
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        // The pid was read after bubblewrap exited: make sure it is still the namespace's
        // PID 1 and not a process that has taken over a recycled pid.
        if !is_namespace_init(pid) {
            return true;
        }
        let mut poll = libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = limit.as_millis().min(i32::MAX as u128) as i32;
        loop {
            // SAFETY: one valid pollfd.
            let n = unsafe { libc::poll(&mut poll, 1, ms) };
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            return n != 0;
        }
    }
}

/// The `child-pid` of bubblewrap's JSON status lines.
fn child_pid(text: &str) -> Option<i32> {
    text.lines().find_map(|line| {
        let v: serde_json::Value = serde_json::from_str(line).ok()?;
        i32::try_from(v.get("child-pid")?.as_i64()?).ok()
    })
}

/// Whether `pid` is PID 1 of a namespace below ours (its `NSpid` line ends in 1).
fn is_namespace_init(pid: i32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("NSpid:"))
        .map(|ids| {
            let ids: Vec<&str> = ids.split_whitespace().collect();
            ids.len() >= 2 && ids.last() == Some(&"1")
        })
        .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_child_pid_of_bubblewraps_status_lines() {
        let text = "{ \"child-pid\": 4242 }\n{ \"exit-code\": 0 }\n";
        assert_eq!(child_pid(text), Some(4242));
        assert_eq!(child_pid(""), None);
        assert_eq!(child_pid("{ \"exit-code\": 1 }\n"), None);
    }
}
