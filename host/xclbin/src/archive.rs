//! The flat archive a directory payload is packed as (FINN partitions, Verilator model
//! directories): no tar, so the reader needs nothing but this file.
//!
//! Layout (little-endian): magic `AFARCH1\0`, u32 entry count, then per file in path order:
//! u32 path length, path bytes (UTF-8, `/`-separated, relative), u32 mode (0o755 for an
//! executable file, else 0o644), u64 size, data. Directories are implied by paths; symlinks
//! are followed.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

pub const MAGIC: &[u8; 8] = b"AFARCH1\0";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveEntry {
    pub path: String,
    pub mode: u32,
    pub data: Vec<u8>,
}

pub fn is_archive(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<(String, PathBuf)>) -> Result<()> {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .with_context(|| format!("reading directory {}", dir.display()))?
        .collect::<std::io::Result<_>>()?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        if path.is_dir() {
            collect(root, &path, out)?;
        } else {
            let rel = path.strip_prefix(root).unwrap();
            let rel = rel
                .to_str()
                .with_context(|| format!("{}: path is not UTF-8", path.display()))?
                .replace(std::path::MAIN_SEPARATOR, "/");
            out.push((rel, path));
        }
    }
    Ok(())
}

pub fn pack_dir(dir: &Path) -> Result<Vec<u8>> {
    use std::os::unix::fs::PermissionsExt;
    let mut files = Vec::new();
    collect(dir, dir, &mut files)?;
    let mut out = MAGIC.to_vec();
    out.extend_from_slice(&(files.len() as u32).to_le_bytes());
    for (rel, path) in files {
        let data = fs::read(&path).with_context(|| format!("reading {}", path.display()))?;
        let mode = archived_mode(fs::metadata(&path)?.permissions().mode());
        out.extend_from_slice(&(rel.len() as u32).to_le_bytes());
        out.extend_from_slice(rel.as_bytes());
        out.extend_from_slice(&mode.to_le_bytes());
        out.extend_from_slice(&(data.len() as u64).to_le_bytes());
        out.extend_from_slice(&data);
    }
    Ok(out)
}

pub fn unpack(bytes: &[u8]) -> Result<Vec<ArchiveEntry>> {
    if !is_archive(bytes) {
        bail!("payload is not an AFARCH1 archive");
    }
    let mut at = 8usize;
    let take = |at: &mut usize, n: usize| -> Result<&[u8]> {
        if *at + n > bytes.len() {
            bail!("AFARCH1 archive truncated at byte {}", *at);
        }
        let s = &bytes[*at..*at + n];
        *at += n;
        Ok(s)
    };
    let count = u32::from_le_bytes(take(&mut at, 4)?.try_into().unwrap());
    let mut out = Vec::new();
    for _ in 0..count {
        let len = u32::from_le_bytes(take(&mut at, 4)?.try_into().unwrap()) as usize;
        let path = String::from_utf8(take(&mut at, len)?.to_vec())?;
        if path.starts_with('/') || path.split('/').any(|c| c == ".." || c.is_empty()) {
            bail!("AFARCH1 archive entry '{path}' escapes its directory");
        }
        let mode = u32::from_le_bytes(take(&mut at, 4)?.try_into().unwrap());
        let size = u64::from_le_bytes(take(&mut at, 8)?.try_into().unwrap()) as usize;
        let data = take(&mut at, size)?.to_vec();
        out.push(ArchiveEntry { path, mode, data });
    }
    Ok(out)
}

/// Only the executable bit is kept (as git does): whether an input is writable depends on
/// the engine (forge's outputs are read-only, buck2's are not), and the archive, so the
/// xclbin, must be the same bytes under either.
fn archived_mode(mode: u32) -> u32 {
    if mode & 0o111 != 0 {
        0o755
    } else {
        0o644
    }
}

/// Writes the archive's files under `dir` (created), keeping their permission bits.
pub fn unpack_to(bytes: &[u8], dir: &Path) -> Result<()> {
    use std::os::unix::fs::PermissionsExt;
    for e in unpack(bytes)? {
        let path = dir.join(&e.path);
        if let Some(parent) = path.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(&path, &e.data).with_context(|| format!("writing {}", path.display()))?;
        fs::set_permissions(&path, fs::Permissions::from_mode(e.mode))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn packed_with_modes(modes: [u32; 2]) -> Vec<u8> {
        let dir = tempfile::tempdir().unwrap();
        for (name, mode) in ["run.sh", "data.json"].into_iter().zip(modes) {
            let path = dir.path().join(name);
            fs::write(&path, name).unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        }
        pack_dir(dir.path()).unwrap()
    }

    #[test]
    fn read_only_and_writable_inputs_pack_to_the_same_bytes() {
        let writable = packed_with_modes([0o755, 0o644]);
        assert_eq!(packed_with_modes([0o555, 0o444]), writable);
        assert_eq!(packed_with_modes([0o500, 0o400]), writable);
        let modes: Vec<(String, u32)> = unpack(&writable)
            .unwrap()
            .into_iter()
            .map(|e| (e.path, e.mode))
            .collect();
        assert_eq!(
            modes,
            [
                ("data.json".to_owned(), 0o644),
                ("run.sh".to_owned(), 0o755)
            ]
        );
    }
}
