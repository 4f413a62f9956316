//! The file-system calls the action's PID 1 makes while it builds the view: paths as C
//! strings, mounts, directories, read-only remounts and descriptors, each error naming the
//! call and the path.

use std::ffi::{CString, OsStr};
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;

use super::*;

pub(super) fn path_c(p: &[u8]) -> Result<CString, String> {
    cstr(p)
}

pub(super) fn os_err(what: &str, path: &[u8]) -> String {
    format!(
        "{what} `{}`: {}",
        OsStr::from_bytes(path).to_string_lossy(),
        io::Error::last_os_error()
    )
}

pub(super) fn mount(
    src: Option<&std::ffi::CStr>,
    dst: &CString,
    fstype: Option<&std::ffi::CStr>,
    flags: libc::c_ulong,
    data: Option<&std::ffi::CStr>,
) -> Result<(), String> {
    let ptr = |c: Option<&std::ffi::CStr>| c.map_or(std::ptr::null(), |c| c.as_ptr());
    // SAFETY: valid C strings or null, as mount(2) takes them.
    let r = unsafe { libc::mount(ptr(src), dst.as_ptr(), ptr(fstype), flags, ptr(data).cast()) };
    if r == 0 {
        Ok(())
    } else {
        Err(os_err("mount on", dst.as_bytes()))
    }
}

/// Creates `path` and its missing parents as directories.
pub(super) fn mkdir_p(path: &[u8]) -> Result<(), String> {
    for (i, b) in path.iter().enumerate().skip(1) {
        if *b == b'/' {
            mkdir_one(&path[..i])?;
        }
    }
    mkdir_one(path)
}

pub(super) fn mkdir_one(path: &[u8]) -> Result<(), String> {
    let c = path_c(path)?;
    // SAFETY: mkdir with a valid C string.
    if unsafe { libc::mkdir(c.as_ptr(), 0o755) } == 0 || errno() == libc::EEXIST {
        Ok(())
    } else {
        Err(os_err("mkdir", path))
    }
}

/// Creates an empty file to mount on, unless something is there already.
pub(super) fn touch(path: &[u8]) -> Result<(), String> {
    let c = path_c(path)?;
    // SAFETY: open/close with a valid C string.
    let fd = unsafe {
        libc::open(
            c.as_ptr(),
            libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC | libc::O_NOFOLLOW,
            0o644,
        )
    };
    if fd >= 0 {
        // SAFETY: closing the descriptor just opened.
        unsafe { libc::close(fd) };
        return Ok(());
    }
    if errno() == libc::EEXIST || errno() == libc::EISDIR {
        return Ok(());
    }
    Err(os_err("creating mount point", path))
}

pub(super) fn join(root: &[u8], rel: &[u8]) -> Vec<u8> {
    let mut p = root.to_vec();
    if !rel.is_empty() {
        p.push(b'/');
        p.extend_from_slice(rel);
    }
    p
}

pub(super) fn parent(path: &[u8]) -> &[u8] {
    match path.iter().rposition(|b| *b == b'/') {
        Some(0) => b"/",
        Some(i) => &path[..i],
        None => b"",
    }
}

/// The flags a bind remount must keep: the kernel refuses to drop `nosuid`, `nodev`,
/// `noexec` or the atime mode of a mount inherited from a more privileged namespace.
pub(super) fn kept_flags(path: &CString) -> Result<(libc::c_ulong, bool), String> {
    // SAFETY: statvfs fills the zeroed struct.
    let mut s: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: valid C string and struct.
    if unsafe { libc::statvfs(path.as_ptr(), &mut s) } != 0 {
        return Err(os_err("statvfs", path.as_bytes()));
    }
    let mut flags = 0;
    for (st, ms) in [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if s.f_flag & st != 0 {
            flags |= ms;
        }
    }
    Ok((flags, s.f_flag & libc::ST_RDONLY != 0))
}

pub(super) fn make_read_only(path: &CString) -> Result<(), String> {
    let (flags, read_only) = kept_flags(path)?;
    if read_only {
        return Ok(());
    }
    mount(
        None,
        path,
        None,
        libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | flags,
        None,
    )
}

pub(super) fn open_path(path: &[u8]) -> Result<RawFd, String> {
    let c = path_c(path)?;
    // SAFETY: open with a valid C string.
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(os_err("open", path));
    }
    Ok(fd)
}

pub(super) fn fchdir(fd: RawFd) -> Result<(), String> {
    // SAFETY: fchdir on a descriptor this process holds.
    if unsafe { libc::fchdir(fd) } == 0 {
        Ok(())
    } else {
        Err(format!("fchdir: {}", io::Error::last_os_error()))
    }
}

pub(super) fn is_dir_fd(fd: RawFd) -> bool {
    // SAFETY: fstat fills the zeroed struct.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: valid descriptor and struct.
    unsafe { libc::fstat(fd, &mut st) == 0 && (st.st_mode & libc::S_IFMT) == libc::S_IFDIR }
}

/// `/proc/self/fd/N`: what mounting from an `O_PATH` descriptor takes as its source.
pub(super) fn fd_path(fd: RawFd) -> Result<CString, String> {
    path_c(format!("/proc/self/fd/{fd}").as_bytes())
}

pub(super) fn lossy(bytes: &[u8]) -> std::borrow::Cow<'_, str> {
    OsStr::from_bytes(bytes).to_string_lossy()
}
