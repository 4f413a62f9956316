//! Where forge keeps its state under `buck-out/forge/`, and small file-system helpers shared
//! by the modules that write there (every write is a temporary name + rename).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub root: PathBuf,
    pub forge: PathBuf,
}

impl Layout {
    pub fn new(root: &Path) -> Layout {
        Layout {
            root: root.to_path_buf(),
            forge: root.join("buck-out").join("forge"),
        }
    }
    pub fn cas_dir(&self) -> PathBuf {
        self.forge.join("cache").join("cas")
    }
    pub fn ac_dir(&self) -> PathBuf {
        self.forge.join("cache").join("ac")
    }
    pub fn digest_cache(&self) -> PathBuf {
        self.forge.join("cache").join("digests")
    }
    pub fn log_dir(&self) -> PathBuf {
        self.forge.join("log")
    }
    pub fn sandbox_dir(&self) -> PathBuf {
        self.forge.join("sandbox")
    }
    pub fn trash_dir(&self) -> PathBuf {
        self.forge.join("trash")
    }
    /// One file per live process group of an action or test (see `procs`).
    pub fn procs_dir(&self) -> PathBuf {
        self.forge.join("procs")
    }
    pub fn lock_file(&self) -> PathBuf {
        self.forge.join("lock")
    }
    /// Absolute path of a project-relative path.
    pub fn abs(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// A name next to `target` that no other writer (thread or process) uses.
pub(crate) fn temp_sibling(target: &Path) -> PathBuf {
    let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}.tmp-{}-{n}", std::process::id()))
}

/// Writes `bytes` to `target` through a temporary file and a rename, so readers (and a later
/// build after a crash) see either the old content or the complete new one.
pub(crate) fn write_atomic(target: &Path, bytes: &[u8]) -> io::Result<()> {
    if let Some(parent) = target.parent() {
        fs::create_dir_all(parent)?;
    }
    let tmp = temp_sibling(target);
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        drop(f);
        fs::rename(&tmp, target)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Removes a file, symlink or directory tree; absent is fine.
pub(crate) fn remove_any(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
        Ok(m) if m.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
    }
}

/// Moves `src` to `dst`, replacing whatever is at `dst` (file or directory). For a directory
/// the old tree is renamed away first, so `dst` is never a mix of old and new content.
pub(crate) fn replace_with(src: &Path, dst: &Path) -> io::Result<()> {
    if let Some(parent) = dst.parent() {
        fs::create_dir_all(parent)?;
    }
    match fs::symlink_metadata(dst) {
        Ok(m) if m.is_dir() => {
            let trash = temp_sibling(dst);
            fs::rename(dst, &trash)?;
            fs::rename(src, dst)?;
            fs::remove_dir_all(&trash)
        }
        Ok(_) => {
            let src_is_dir = fs::symlink_metadata(src)?.is_dir();
            if src_is_dir {
                fs::remove_file(dst)?;
            }
            fs::rename(src, dst)
        }
        Err(_) => fs::rename(src, dst),
    }
}

/// `rel` as seen from directory `from_dir` (both project-relative), for relative symlinks.
pub(crate) fn relative_path(from_dir: &str, rel: &str) -> String {
    let from: Vec<&str> = from_dir.split('/').filter(|s| !s.is_empty()).collect();
    let to: Vec<&str> = rel.split('/').filter(|s| !s.is_empty()).collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<&str> = vec![".."; from.len() - common];
    parts.extend(&to[common..]);
    if parts.is_empty() {
        ".".to_string()
    } else {
        parts.join("/")
    }
}

/// Parent of a project-relative path (`""` for a top-level name).
pub(crate) fn parent_of(rel: &str) -> &str {
    rel.rfind('/').map(|i| &rel[..i]).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_paths_match_posix_resolution() {
        assert_eq!(relative_path("a/b", "a/c/d"), "../c/d");
        assert_eq!(relative_path("", "x/y"), "x/y");
        assert_eq!(relative_path("a/b/c", "x"), "../../../x");
    }
}
