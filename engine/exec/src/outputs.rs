//! Declared outputs: capturing what an action produced as a [`Node`], checking whether what
//! is on disk still matches a cached result, storing outputs in the CAS and materialising
//! them back.

use std::fs;
use std::io;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;

use anyhow::{Context, Result};

use crate::action_cache::Node;
use crate::cas::Cas;
use crate::digest::DigestCache;

/// Describes what is at `abs` (symlinks not followed).
pub fn capture(abs: &Path, digests: &DigestCache) -> io::Result<Node> {
    let meta = fs::symlink_metadata(abs)?;
    if meta.file_type().is_symlink() {
        return Ok(Node::Symlink {
            target: fs::read_link(abs)?.to_string_lossy().into_owned(),
        });
    }
    if meta.is_dir() {
        let mut entries = Vec::new();
        for entry in walkdir::WalkDir::new(abs).sort_by_file_name().min_depth(1) {
            let entry = entry.map_err(io::Error::other)?;
            let rel = entry
                .path()
                .strip_prefix(abs)
                .expect("walkdir stays under its root")
                .to_string_lossy()
                .into_owned();
            let node = if entry.file_type().is_dir() {
                Node::Dir {
                    entries: Vec::new(),
                }
            } else {
                capture(entry.path(), digests)?
            };
            entries.push((rel, node));
        }
        // Plain path order, so a manifest built from a remote listing compares equal.
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        return Ok(Node::Dir { entries });
    }
    let d = digests.file_digest(abs)?;
    Ok(Node::File {
        hash: d.hash,
        size: d.size,
        executable: d.executable,
    })
}

/// True when what is at `abs` is exactly `node`.
pub fn matches(abs: &Path, node: &Node, digests: &DigestCache) -> bool {
    match capture(abs, digests) {
        Ok(found) => &found == node,
        Err(_) => false,
    }
}

/// Adds every file of `node` (found at `abs`) to the CAS.
pub fn store(abs: &Path, node: &Node, cas: &Cas) -> io::Result<()> {
    match node {
        Node::File { hash, .. } => cas.store_file(abs, hash),
        Node::Symlink { .. } => Ok(()),
        Node::Dir { entries } => {
            for (rel, n) in entries {
                if let Node::File { hash, .. } = n {
                    cas.store_file(&abs.join(rel), hash)?;
                }
            }
            Ok(())
        }
    }
}

/// Creates `node` at `dst` (which must not exist) from CAS blobs.
pub fn materialise(node: &Node, cas: &Cas, dst: &Path) -> Result<()> {
    match node {
        Node::File {
            hash, executable, ..
        } => cas
            .materialise(hash, *executable, dst)
            .with_context(|| format!("restoring `{}` from the local cache", dst.display())),
        Node::Symlink { target } => {
            symlink(target, dst).with_context(|| format!("creating symlink `{}`", dst.display()))
        }
        Node::Dir { entries } => {
            fs::create_dir_all(dst)?;
            fs::set_permissions(dst, fs::Permissions::from_mode(0o755))?;
            for (rel, n) in entries {
                let path = dst.join(rel);
                if let Some(parent) = path.parent() {
                    fs::create_dir_all(parent)?;
                }
                match n {
                    Node::Dir { .. } => fs::create_dir_all(&path)?,
                    other => materialise(other, cas, &path)?,
                }
            }
            Ok(())
        }
    }
}

/// The CAS blobs `node` refers to.
pub fn blobs(node: &Node) -> Vec<&str> {
    match node {
        Node::File { hash, .. } => vec![hash.as_str()],
        Node::Symlink { .. } => Vec::new(),
        Node::Dir { entries } => entries.iter().flat_map(|(_, n)| blobs(n)).collect(),
    }
}
