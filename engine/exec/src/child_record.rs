//! The record of a process group written by the group's leader itself, between `fork` and
//! `exec`. forge's own record (written by [`crate::procs::Group::track`] once `spawn` returns)
//! comes too late when forge is killed with SIGKILL in that window: the command has already
//! started and may have left a daemon in its group that nothing names. Written by the child
//! before it execs, the record exists before the command can start anything; a child whose
//! forge died before the record was written finds a new parent and does not exec.
//!
//! Everything here runs in the forked child of a multi-threaded process, so only
//! async-signal-safe calls are made (`getpid`, `getppid`, `open`, `openat`, `read`, `close`)
//! and nothing is allocated: the directory and the owner's half of the name are prepared
//! before the fork.

use std::ffi::CString;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// What the child needs to name itself: the records' directory (open) and the owner's pid
/// and start time, the first half of [`crate::procs`]' record name.
pub(crate) struct ChildRecord {
    dir: OwnedFd,
    owner: i32,
    owner_start: u64,
}

impl ChildRecord {
    /// Opens `procs_dir` (close-on-exec: the command never sees it); `None` when it cannot be
    /// opened, in which case forge's own record after `spawn` is the only one.
    pub(crate) fn prepare(procs_dir: &Path, owner: i32, owner_start: u64) -> Option<ChildRecord> {
        let path = CString::new(procs_dir.as_os_str().as_bytes()).ok()?;
        // SAFETY: a plain open of a NUL-terminated path; the fd is owned below.
        let fd = unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        // SAFETY: `fd` was just opened by this process and is owned by nothing else.
        (fd >= 0).then(|| ChildRecord {
            dir: unsafe { OwnedFd::from_raw_fd(fd) },
            owner,
            owner_start,
        })
    }

    /// In the child, before exec: writes the record and checks that forge still lives.
    /// An error stops the exec (`std` reports it to the parent, if any, and the child exits).
    pub(crate) fn write_in_child(&self) -> std::io::Result<()> {
        // SAFETY: getpid is async-signal-safe.
        let me = unsafe { libc::getpid() };
        let mut name = [0u8; 96];
        let mut len = 0;
        for (i, n) in [
            self.owner as u64,
            self.owner_start,
            me as u64,
            own_start_time().unwrap_or(0),
        ]
        .into_iter()
        .enumerate()
        {
            if i > 0 {
                name[len] = b'-';
                len += 1;
            }
            len += write_decimal(n, &mut name[len..]);
        }
        // name[len] is already 0: the array's tail is the terminator.
        // SAFETY: openat/close are async-signal-safe; `name` is NUL-terminated.
        let fd = unsafe {
            libc::openat(
                self.dir.as_raw_fd(),
                name.as_ptr().cast(),
                libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC,
                0o644,
            )
        };
        if fd >= 0 {
            // SAFETY: closes the fd just opened.
            unsafe { libc::close(fd) };
        }
        // A forge that died before this point left no record naming this group: do not
        // start the command. After it, the record names the group for the next start.
        // SAFETY: getppid is async-signal-safe.
        if unsafe { libc::getppid() } != self.owner {
            return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
        }
        Ok(())
    }
}

/// Writes `n` in decimal at the start of `out`; returns the number of bytes.
fn write_decimal(mut n: u64, out: &mut [u8]) -> usize {
    let mut digits = [0u8; 20];
    let mut k = 0;
    loop {
        digits[k] = b'0' + (n % 10) as u8;
        k += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for i in 0..k {
        out[i] = digits[k - 1 - i];
    }
    k
}

/// This process's start time (`/proc/self/stat` field 22), read without allocating.
fn own_start_time() -> Option<u64> {
    let mut buf = [0u8; 2048];
    // SAFETY: open/read/close are async-signal-safe; the path is a NUL-terminated literal.
    let n = unsafe {
        let fd = libc::open(
            c"/proc/self/stat".as_ptr(),
            libc::O_RDONLY | libc::O_CLOEXEC,
        );
        if fd < 0 {
            return None;
        }
        let n = libc::read(fd, buf.as_mut_ptr().cast(), buf.len());
        libc::close(fd);
        n
    };
    let stat = buf.get(..usize::try_from(n).ok()?)?;
    parse_start_time(stat)
}

/// Field 22 of a `/proc/<pid>/stat` line: the 20th after the command name, which is in
/// parentheses and may itself contain spaces and parentheses.
pub(crate) fn parse_start_time(stat: &[u8]) -> Option<u64> {
    let close = stat.iter().rposition(|&b| b == b')')?;
    let rest = stat.get(close + 2..)?;
    let field = rest
        .split(|&b| b == b' ')
        .filter(|f| !f.is_empty())
        .nth(19)?;
    let mut n: u64 = 0;
    for &b in field {
        if !b.is_ascii_digit() {
            return None;
        }
        n = n.checked_mul(10)?.checked_add(u64::from(b - b'0'))?;
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_start_time_as_the_allocating_reader_does() {
        let pid = std::process::id() as i32;
        let text = std::fs::read(format!("/proc/{pid}/stat")).unwrap();
        assert_eq!(parse_start_time(&text), crate::procs::start_time(pid));
        let odd = b"42 (a) b (c) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 777 19\n";
        assert_eq!(parse_start_time(odd), Some(777));
    }

    /// The command finds its group's record already written when it starts, under the one
    /// name forge's own record has (a second name would be a file no one removes).
    #[test]
    fn the_record_exists_before_the_command_runs_under_forges_name() {
        let dir = tempfile::tempdir().unwrap();
        let procs = dir.path().join("procs");
        let mut cmd = std::process::Command::new("/bin/ls");
        cmd.arg(&procs).stdout(std::process::Stdio::piped());
        let (child, group) = crate::procs::spawn_tracked(&mut cmd, &procs).unwrap();
        let out = child.wait_with_output().unwrap();
        let seen = String::from_utf8(out.stdout).unwrap();
        let names: Vec<String> = std::fs::read_dir(&procs)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        assert_eq!(seen.trim(), names[0]);
        group.finish();
        assert_eq!(std::fs::read_dir(&procs).unwrap().count(), 0);
    }

    /// A child whose parent is not the recorded forge (forge died and the child was
    /// re-parented) writes its record but does not start the command.
    #[test]
    fn a_child_of_a_dead_forge_does_not_exec() {
        use std::os::unix::process::CommandExt;
        let dir = tempfile::tempdir().unwrap();
        let record = ChildRecord::prepare(dir.path(), 1, 5).unwrap();
        let mut cmd = std::process::Command::new("/bin/true");
        // SAFETY: the closure only makes the record's async-signal-safe calls.
        unsafe { cmd.pre_exec(move || record.write_in_child()) };
        let err = cmd.spawn().unwrap_err();
        assert_eq!(err.raw_os_error(), Some(libc::ESRCH), "{err}");
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
        assert!(names[0].starts_with("1-5-"), "{names:?}");
    }

    #[test]
    fn writes_decimals() {
        let mut out = [0u8; 20];
        for n in [0u64, 7, 10, 123_456_789, u64::MAX] {
            let k = write_decimal(n, &mut out);
            assert_eq!(std::str::from_utf8(&out[..k]).unwrap(), n.to_string());
        }
    }
}
