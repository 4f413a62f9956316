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

/// The paths of the regular files of `node`, found at `abs`.
pub fn files(abs: &Path, node: &Node) -> Vec<std::path::PathBuf> {
    match node {
        Node::File { .. } => vec![abs.to_path_buf()],
        Node::Symlink { .. } => Vec::new(),
        Node::Dir { entries } => entries
            .iter()
            .filter(|(_, n)| matches!(n, Node::File { .. }))
            .map(|(rel, _)| abs.join(rel))
            .collect(),
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

/// What a path inside an action's outputs is, for [`link_escapes`].
enum Entry {
    Dir,
    File,
    Link(String),
}

/// The one rule for symlinks in a command's outputs: a link must be relative and resolve —
/// following the other links of the same outputs, never leaving them or their parent
/// directories on the way — to a path inside the action's declared outputs. Anything else (an
/// absolute link, one that climbs out, a cycle) could make a later action, or the cache,
/// read a path nobody declared: the host's files by an absolute path, an undeclared project
/// file by `../..`. Returns the offending `(link, target)` pairs, project-relative.
pub fn link_escapes(root: &Path, outputs: &[String]) -> io::Result<Vec<(String, String)>> {
    let mut tree = std::collections::BTreeMap::new();
    for out in outputs {
        let base = root.join(out);
        let Ok(meta) = fs::symlink_metadata(&base) else {
            continue;
        };
        if !meta.is_dir() {
            tree.insert(out.clone(), entry_of(&base, &meta)?);
            continue;
        }
        for e in walkdir::WalkDir::new(&base) {
            let e = e.map_err(io::Error::other)?;
            let rel = e.path().strip_prefix(root).expect("under root");
            let meta = e.path().symlink_metadata()?;
            tree.insert(
                rel.to_string_lossy().into_owned(),
                entry_of(e.path(), &meta)?,
            );
        }
    }
    let mut found = Vec::new();
    for (path, entry) in &tree {
        if let Entry::Link(target) = entry {
            if !stays_inside(&tree, outputs, path, target, 0) {
                found.push((path.clone(), target.clone()));
            }
        }
    }
    Ok(found)
}

fn entry_of(path: &Path, meta: &fs::Metadata) -> io::Result<Entry> {
    Ok(if meta.file_type().is_symlink() {
        Entry::Link(fs::read_link(path)?.to_string_lossy().into_owned())
    } else if meta.is_dir() {
        Entry::Dir
    } else {
        Entry::File
    })
}

fn under(path: &str, dir: &str) -> bool {
    path == dir || (path.starts_with(dir) && path.as_bytes().get(dir.len()) == Some(&b'/'))
}

/// Resolves `target` of the link at `link` step by step (lexically, expanding links found in
/// `tree`); false as soon as a step leaves the outputs and their ancestors, or at the end
/// when the result is not inside an output.
fn stays_inside(
    tree: &std::collections::BTreeMap<String, Entry>,
    outputs: &[String],
    link: &str,
    target: &str,
    depth: usize,
) -> bool {
    if depth > 40 || target.starts_with('/') || target.is_empty() {
        return false;
    }
    let inside = |p: &str| outputs.iter().any(|o| under(p, o));
    let allowed = |p: &str| inside(p) || outputs.iter().any(|o| under(o, p) || p.is_empty());
    let mut cur: Vec<String> = crate::layout::parent_of(link)
        .split('/')
        .filter(|c| !c.is_empty())
        .map(str::to_string)
        .collect();
    for comp in target.split('/') {
        match comp {
            "" | "." => continue,
            ".." => {
                if cur.pop().is_none() {
                    return false;
                }
            }
            name => {
                cur.push(name.to_string());
                let here = cur.join("/");
                if let Some(Entry::Link(next)) = tree.get(&here) {
                    if !stays_inside(tree, outputs, &here, next, depth + 1) {
                        return false;
                    }
                    // Continue from where that link leads (re-resolved lexically).
                    let resolved = resolve_lexically(crate::layout::parent_of(&here), next);
                    cur = resolved
                        .split('/')
                        .filter(|c| !c.is_empty())
                        .map(str::to_string)
                        .collect();
                }
            }
        }
        if !allowed(&cur.join("/")) {
            return false;
        }
    }
    inside(&cur.join("/"))
}

fn resolve_lexically(dir: &str, target: &str) -> String {
    let mut cur: Vec<&str> = dir.split('/').filter(|c| !c.is_empty()).collect();
    for comp in target.split('/') {
        match comp {
            "" | "." => {}
            ".." => {
                cur.pop();
            }
            name => cur.push(name),
        }
    }
    cur.join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escapes(links: &[(&str, &str)], outputs: &[&str]) -> Vec<String> {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for o in outputs {
            fs::create_dir_all(root.join(o)).unwrap();
        }
        fs::write(root.join(outputs[0]).join("file"), "x").unwrap();
        for (l, t) in links {
            std::os::unix::fs::symlink(t, root.join(l)).unwrap();
        }
        let outs: Vec<String> = outputs.iter().map(|s| s.to_string()).collect();
        link_escapes(root, &outs)
            .unwrap()
            .into_iter()
            .map(|(l, _)| l)
            .collect()
    }

    #[test]
    fn only_relative_links_that_stay_inside_the_outputs_are_kept() {
        let o = ["out/d"];
        assert!(escapes(&[("out/d/a", "file")], &o).is_empty());
        assert!(escapes(&[("out/d/a", "./file")], &o).is_empty());
        assert!(escapes(&[("out/d/a", "../d/file")], &o).is_empty());
        assert_eq!(escapes(&[("out/d/a", "/etc/passwd")], &o), ["out/d/a"]);
        assert_eq!(escapes(&[("out/d/a", "../../secret")], &o), ["out/d/a"]);
        assert_eq!(escapes(&[("out/d/a", "../../../../x")], &o), ["out/d/a"]);
        // Through another link: `b` is inside, but `b/..` climbs out of `out/` itself.
        assert_eq!(
            escapes(&[("out/d/b", "."), ("out/d/a", "b/../../../x")], &o),
            ["out/d/a"]
        );
        // A cycle never resolves.
        assert_eq!(escapes(&[("out/d/a", "b"), ("out/d/b", "a")], &o).len(), 2);
        // Between two outputs of the same action.
        assert!(escapes(&[("out/e/a", "../d/file")], &["out/d", "out/e"]).is_empty());
    }
}
