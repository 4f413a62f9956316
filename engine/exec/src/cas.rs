//! The local content-addressed store: `buck-out/forge/cache/cas/<aa>/<sha256>`.
//! Blobs enter by hardlink (or copy) under a temporary name and a rename; a blob whose
//! content no longer matches its name is detected before use.
//!
//! Blobs are read-only, with exactly [`output_mode`]. An output that shares its inode
//! with a blob (it was stored, or restored, by hard link) is therefore read-only too: a later
//! action that writes to it by an absolute path gets EACCES instead of silently changing the
//! cache entry. (Its owner can still `chmod` it back: forge notices through `verify` before a
//! blob is used again, and the hermetic sandbox does not show other outputs at all.)

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::digest::{hash_bytes, DigestCache};
use crate::layout::{temp_sibling, write_atomic};

pub struct Cas {
    dir: PathBuf,
}

impl Cas {
    pub fn new(dir: PathBuf) -> Cas {
        Cas { dir }
    }

    pub fn path_of(&self, hash: &str) -> PathBuf {
        self.dir.join(&hash[..2]).join(hash)
    }

    /// Adds the file at `file` (whose digest is `hash`) to the store; `file` ends up
    /// read-only (see the module docs).
    pub fn store_file(&self, file: &Path, hash: &str) -> io::Result<()> {
        make_read_only(file)?;
        let dst = self.path_of(hash);
        if dst.exists() {
            return Ok(());
        }
        let parent = dst.parent().expect("blob has a parent");
        // A hard link names the complete file at once, so it can take the final name
        // directly (no temporary name + rename); only a copy needs the temporary name.
        let linked = match fs::hard_link(file, &dst) {
            Err(e) if e.kind() == io::ErrorKind::NotFound && !parent.exists() => {
                fs::create_dir_all(parent)?;
                fs::hard_link(file, &dst)
            }
            other => other,
        };
        match linked {
            Ok(()) => return Ok(()),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => return Ok(()),
            Err(_) => {}
        }
        fs::create_dir_all(parent)?;
        let tmp = temp_sibling(&dst);
        fs::copy(file, &tmp)?;
        make_read_only(&tmp)?;
        fs::rename(&tmp, &dst).inspect_err(|_| {
            let _ = fs::remove_file(&tmp);
        })
    }

    pub fn store_bytes(&self, bytes: &[u8]) -> io::Result<String> {
        let hash = hash_bytes(bytes);
        let dst = self.path_of(&hash);
        if !dst.exists() {
            write_atomic(&dst, bytes)?;
        }
        Ok(hash)
    }

    /// True when the blob exists and its content still hashes to its name.
    pub fn verify(&self, hash: &str, digests: &DigestCache) -> bool {
        let path = self.path_of(hash);
        match digests.file_digest(&path) {
            Ok(d) => d.hash == hash,
            Err(_) => false,
        }
    }

    pub fn remove(&self, hash: &str, digests: &DigestCache) {
        let path = self.path_of(hash);
        digests.forget(&path);
        let _ = fs::remove_file(path);
    }

    /// Places blob `hash` at `dst`, read-only, with the wanted executable bit: a hardlink
    /// when the stored file already has that mode, otherwise a copy (`copy_file_range`, a
    /// reflink where the file system supports it).
    pub fn materialise(&self, hash: &str, executable: bool, dst: &Path) -> io::Result<()> {
        let src = self.path_of(hash);
        // Blobs fetched from a remote cache arrive with the default mode.
        make_read_only(&src)?;
        let src_exec = fs::metadata(&src)?.permissions().mode() & 0o111 != 0;
        if src_exec == executable && fs::hard_link(&src, dst).is_ok() {
            return Ok(());
        }
        fs::copy(&src, dst)?;
        fs::set_permissions(dst, fs::Permissions::from_mode(output_mode(executable)))
    }
}

/// The one mode of every output file of a command (a run action), whether it ran here, a
/// local cache entry restored it or it came from a remote cache or a remote worker: 0444, or
/// 0555 when executable (any execute bit, as in the digest: `DigestCache::file_digest`).
/// It is buck2's 0644 / 0755 (the modes buck2 gives the files it writes, by the executable
/// flag alone) without the write bits, which forge clears because an output shares its inode
/// with its CAS blob. buck2 itself leaves a local run's outputs writable with the action's own
/// execute bits (a 0700 file ends up 0744 there), so its modes depend on where an action ran;
/// forge's do not. In-process actions (`write`, `copy_file`) are never restored from a cache
/// and keep buck2's exact 0644 / 0755 (`in_process.rs`, checked by conformance/write).
pub const fn output_mode(executable: bool) -> u32 {
    if executable {
        0o555
    } else {
        0o444
    }
}

/// Gives `path` its [`output_mode`] (a no-op when it has it): an action's own umask (a 0600
/// file) or a download's temporary file must not decide the mode an output ends up with.
pub fn make_read_only(path: &Path) -> io::Result<()> {
    let mode = fs::metadata(path)?.permissions().mode() & 0o7777;
    let wanted = output_mode(mode & 0o111 != 0);
    if mode == wanted {
        return Ok(());
    }
    fs::set_permissions(path, fs::Permissions::from_mode(wanted))
}
