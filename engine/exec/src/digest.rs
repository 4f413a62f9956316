//! Content digests (sha256, as REAPI servers use) and the digest cache that lets a no-op
//! build skip re-hashing files whose size, mtime, ctime, inode and device are unchanged.
//! ctime matters: an editor or tool can rewrite a file in place and restore its mtime
//! (`touch -d`, `cp -p`, `rsync -t`), but any write or metadata change sets ctime to now,
//! and no unprivileged call can set it back.

use std::collections::HashMap;
use std::fs;
use std::io::{self, Read};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::layout::write_atomic;

/// A file's content digest, size and executable bit.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileDigest {
    pub hash: String,
    pub size: u64,
    pub executable: bool,
}

pub fn hash_bytes(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}

pub fn hash_reader(mut r: impl Read) -> io::Result<(String, u64)> {
    let mut hasher = Sha256::new();
    // Small enough to stay off mmap: a fresh 1 MiB buffer per file cost a map, page faults
    // and an unmap for every (typically tiny) output and input hashed.
    let mut buf = vec![0u8; 64 << 10];
    let mut size = 0u64;
    loop {
        let n = r.read(&mut buf)?;
        if n == 0 {
            break;
        }
        size += n as u64;
        hasher.update(&buf[..n]);
    }
    Ok((hex::encode(hasher.finalize()), size))
}

pub fn hash_file(path: &Path) -> io::Result<(String, u64)> {
    hash_reader(fs::File::open(path)?)
}

/// A file whose mtime is this close to the moment it was hashed may still change without
/// its mtime changing (coarse file-system timestamps), so its digest is not persisted.
const RACY_WINDOW_NS: i128 = 2_000_000_000;

#[derive(Clone, Debug, Serialize, Deserialize)]
struct Entry {
    size: u64,
    mtime_ns: i128,
    /// Absent in caches written before ctime was recorded: such entries never match.
    #[serde(default)]
    ctime_ns: i128,
    ino: u64,
    dev: u64,
    hash: String,
    /// Persisted only when the file was hashed well after its last modification.
    #[serde(skip)]
    trusted: bool,
}

/// Cache of file digests keyed by path and validated by size, mtime and ctime (ns), inode
/// and device.
/// One instance lives for one build: entries hashed too soon after a modification are used
/// within that build only and never persisted.
pub struct DigestCache {
    file: PathBuf,
    entries: Mutex<HashMap<PathBuf, Entry>>,
    dirty: Mutex<bool>,
}

fn mtime_ns(m: &fs::Metadata) -> i128 {
    m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128
}

fn ctime_ns(m: &fs::Metadata) -> i128 {
    m.ctime() as i128 * 1_000_000_000 + m.ctime_nsec() as i128
}

fn same_stat(e: &Entry, m: &fs::Metadata) -> bool {
    e.size == m.len()
        && e.mtime_ns == mtime_ns(m)
        && e.ctime_ns == ctime_ns(m)
        && e.ino == m.ino()
        && e.dev == m.dev()
}

fn now_ns() -> i128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_nanos() as i128)
        .unwrap_or(0)
}

impl DigestCache {
    /// Loads the cache; an unreadable or corrupt file just means an empty cache.
    pub fn load(file: PathBuf) -> DigestCache {
        let entries: HashMap<PathBuf, Entry> = fs::read(&file)
            .ok()
            .and_then(|b| serde_json::from_slice::<Vec<(PathBuf, Entry)>>(&b).ok())
            .map(|v| {
                v.into_iter()
                    .map(|(p, mut e)| {
                        e.trusted = true;
                        (p, e)
                    })
                    .collect()
            })
            .unwrap_or_default();
        DigestCache {
            file,
            entries: Mutex::new(entries),
            dirty: Mutex::new(false),
        }
    }

    /// Digest of the file at `path` (symlinks followed).
    pub fn file_digest(&self, path: &Path) -> io::Result<FileDigest> {
        let meta = fs::metadata(path)?;
        let executable = meta.permissions().mode() & 0o111 != 0;
        if let Some(e) = self.entries.lock().unwrap().get(path) {
            if same_stat(e, &meta) {
                return Ok(FileDigest {
                    hash: e.hash.clone(),
                    size: e.size,
                    executable,
                });
            }
        }
        let before = now_ns();
        let (hash, size) = hash_file(path)?;
        // Re-stat: a file modified while being hashed must not be cached under the new stat.
        let after = fs::metadata(path)?;
        if after.len() == meta.len()
            && mtime_ns(&after) == mtime_ns(&meta)
            && ctime_ns(&after) == ctime_ns(&meta)
        {
            let changed = mtime_ns(&meta).max(ctime_ns(&meta));
            let trusted = before - changed > RACY_WINDOW_NS;
            self.entries.lock().unwrap().insert(
                path.to_path_buf(),
                Entry {
                    size,
                    mtime_ns: mtime_ns(&meta),
                    ctime_ns: ctime_ns(&meta),
                    ino: meta.ino(),
                    dev: meta.dev(),
                    hash: hash.clone(),
                    trusted,
                },
            );
            if trusted {
                *self.dirty.lock().unwrap() = true;
            }
        }
        Ok(FileDigest {
            hash,
            size,
            executable,
        })
    }

    /// Takes the new ctime of a file whose content forge just hashed and then changed only
    /// in metadata itself (made it read-only, hard-linked it into the CAS), so the next build
    /// does not hash it again. Nothing else may have written it in between: callers hold
    /// the file in a place no action runs.
    pub fn keep_after_own_metadata_change(&self, path: &Path) {
        let Ok(meta) = fs::metadata(path) else {
            return;
        };
        let mut entries = self.entries.lock().unwrap();
        if let Some(e) = entries.get_mut(path) {
            if e.size == meta.len() && e.mtime_ns == mtime_ns(&meta) && e.ino == meta.ino() {
                e.ctime_ns = ctime_ns(&meta);
                if e.trusted {
                    *self.dirty.lock().unwrap() = true;
                }
            }
        }
    }

    pub fn forget(&self, path: &Path) {
        if self.entries.lock().unwrap().remove(path).is_some() {
            *self.dirty.lock().unwrap() = true;
        }
    }

    /// Persists the trusted entries (temporary file + rename).
    pub fn save(&self) -> io::Result<()> {
        let mut dirty = self.dirty.lock().unwrap();
        if !*dirty {
            return Ok(());
        }
        let entries = self.entries.lock().unwrap();
        let list: Vec<(&PathBuf, &Entry)> = entries.iter().filter(|(_, e)| e.trusted).collect();
        let bytes = serde_json::to_vec(&list).map_err(io::Error::other)?;
        write_atomic(&self.file, &bytes)?;
        *dirty = false;
        Ok(())
    }
}

/// One file inside a directory input, path relative to the directory.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DirFile {
    pub rel: String,
    pub digest: FileDigest,
}

/// The digest of an input: a file, or a directory tree (symlinks followed).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct InputDigest {
    pub path: String,
    /// File digest, or for a directory the sha256 over its sorted entries.
    pub hash: String,
    pub executable: bool,
    pub is_dir: bool,
    /// File size (0 for a directory).
    pub size: u64,
    #[serde(skip)]
    pub files: Vec<DirFile>,
}

/// Digests `rel` (project-relative) under `root`.
pub fn input_digest(cache: &DigestCache, root: &Path, rel: &str) -> io::Result<InputDigest> {
    let abs = root.join(rel);
    let meta = fs::metadata(&abs)?;
    if !meta.is_dir() {
        let d = cache.file_digest(&abs)?;
        return Ok(InputDigest {
            path: rel.to_string(),
            hash: d.hash,
            executable: d.executable,
            is_dir: false,
            size: d.size,
            files: Vec::new(),
        });
    }
    let mut files = Vec::new();
    let mut listing = String::new();
    for entry in walkdir::WalkDir::new(&abs)
        .follow_links(true)
        .sort_by_file_name()
        .min_depth(1)
    {
        let entry = entry.map_err(io::Error::other)?;
        let sub = entry
            .path()
            .strip_prefix(&abs)
            .expect("walkdir stays under its root")
            .to_string_lossy()
            .into_owned();
        if entry.file_type().is_dir() {
            listing.push_str(&format!("d {sub}\n"));
            continue;
        }
        let digest = cache.file_digest(entry.path())?;
        listing.push_str(&format!(
            "f {sub} {} {}\n",
            digest.hash,
            if digest.executable { "x" } else { "-" }
        ));
        files.push(DirFile { rel: sub, digest });
    }
    Ok(InputDigest {
        path: rel.to_string(),
        hash: hash_bytes(listing.as_bytes()),
        executable: false,
        is_dir: true,
        size: 0,
        files,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_matches_published_vector() {
        // FIPS 180-2 test vector for "abc".
        assert_eq!(
            hash_bytes(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn cached_digest_follows_content_changes() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x");
        fs::write(&f, "one").unwrap();
        let cache = DigestCache::load(dir.path().join("cache"));
        assert_eq!(cache.file_digest(&f).unwrap().hash, hash_bytes(b"one"));
        cache.save().unwrap();
        // Same size, and possibly the same coarse mtime: a later build must still notice.
        fs::write(&f, "two").unwrap();
        let cache = DigestCache::load(dir.path().join("cache"));
        assert_eq!(cache.file_digest(&f).unwrap().hash, hash_bytes(b"two"));
    }

    #[test]
    fn in_place_edit_with_mtime_restored_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x");
        fs::write(&f, "one").unwrap();
        let old = fs::File::open(&f)
            .unwrap()
            .metadata()
            .unwrap()
            .modified()
            .unwrap();
        // Old enough to be trusted and persisted.
        let past = old - std::time::Duration::from_secs(60);
        let set_mtime = |t| {
            fs::File::options()
                .write(true)
                .open(&f)
                .unwrap()
                .set_modified(t)
                .unwrap()
        };
        set_mtime(past);
        let cache = DigestCache::load(dir.path().join("cache"));
        assert_eq!(cache.file_digest(&f).unwrap().hash, hash_bytes(b"one"));
        cache.save().unwrap();
        // Same size, same inode, mtime put back: only ctime tells.
        fs::write(&f, "two").unwrap();
        set_mtime(past);
        let cache = DigestCache::load(dir.path().join("cache"));
        assert_eq!(cache.file_digest(&f).unwrap().hash, hash_bytes(b"two"));
    }
}
