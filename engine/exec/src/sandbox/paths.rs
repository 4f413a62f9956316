//! Path arithmetic of the sandbox's view: which inputs are mounted as whole directories,
//! which nest in others, where symlinks inside inputs point.

use super::*;

pub(super) fn is_under(path: &str, dir: &str) -> bool {
    dir.is_empty() || path == dir || (path.starts_with(dir) && path.as_bytes()[dir.len()] == b'/')
}

/// Adds `rel` (project-relative) and every ancestor of it, down to `""` (the sandbox).
pub(super) fn add_with_ancestors(dirs: &mut BTreeSet<String>, rel: &str) {
    let mut p = rel;
    while dirs.insert(p.to_string()) && !p.is_empty() {
        p = parent_of(p);
    }
}

/// Drops paths that sit inside another path of the set.
pub(super) fn outermost(paths: impl IntoIterator<Item = String>) -> Vec<String> {
    let sorted: BTreeSet<String> = paths.into_iter().collect();
    let mut out: Vec<String> = Vec::new();
    for p in sorted {
        if !out.iter().any(|o| is_under(&p, o)) {
            out.push(p);
        }
    }
    out
}

/// Replaces inputs that together are the whole of a directory by that directory, up the
/// tree as far as that holds: bubblewrap then mounts one directory instead of each file.
/// A directory is whole when every entry the file system lists in it is an input (or a
/// whole directory); one that holds, or lies inside, an output, the scratch dir or a
/// passthrough path (`apart`) is never merged, and neither is the project root.
pub(super) fn whole_dirs(root: &Path, inputs: Vec<String>, apart: &[&str]) -> Vec<String> {
    let mut set: BTreeSet<String> = inputs.into_iter().collect();
    loop {
        let mut parents: Vec<String> = set
            .iter()
            .map(|p| parent_of(p).to_string())
            .filter(|d| !d.is_empty() && !set.contains(d))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        // Deepest first, so a merged directory can make its parent whole on the next round.
        parents.sort_by_key(|d| std::cmp::Reverse(d.matches('/').count()));
        let mut merged = false;
        for d in parents {
            if set.contains(&d) || apart.iter().any(|a| is_under(a, &d) || is_under(&d, a)) {
                continue;
            }
            let Ok(entries) = fs::read_dir(root.join(&d)) else {
                continue;
            };
            let whole = entries.into_iter().all(|e| {
                e.is_ok_and(|e| set.contains(&format!("{d}/{}", e.file_name().to_string_lossy())))
            });
            if whole {
                set.retain(|p| !is_under(p, &d));
                set.insert(d);
                merged = true;
            }
        }
        if !merged {
            return set.into_iter().collect();
        }
    }
}

/// The project-relative `[forge] sandbox_passthrough` paths (made visible read-write).
pub(crate) fn relative_passthrough(passthrough: &[String]) -> impl Iterator<Item = &str> {
    passthrough
        .iter()
        .map(|p| p.trim_end_matches('/'))
        .filter(|p| !p.starts_with('/') && !p.starts_with("~/") && !p.is_empty())
}

pub(super) fn expand_home(p: &str) -> Option<PathBuf> {
    if let Some(rest) = p.strip_prefix("~/") {
        Some(PathBuf::from(std::env::var_os("HOME")?).join(rest))
    } else if p.starts_with('/') {
        Some(PathBuf::from(p))
    } else {
        None
    }
}

/// Project paths that symlinks inside the given inputs point at (so bubblewrap can mount
/// them too; the symlink forest resolves them through the real tree).
pub(super) fn symlink_targets(root: &Path, inputs: &[String]) -> Vec<String> {
    let mut found = BTreeSet::new();
    let mut queue: Vec<PathBuf> = inputs.iter().map(|i| root.join(i)).collect();
    let mut visited = BTreeSet::new();
    while let Some(path) = queue.pop() {
        if !visited.insert(path.clone()) {
            continue;
        }
        for entry in walkdir::WalkDir::new(&path).into_iter().flatten() {
            if !entry.path_is_symlink() {
                continue;
            }
            let Ok(target) = fs::canonicalize(entry.path()) else {
                continue;
            };
            if let Ok(rel) = target.strip_prefix(root) {
                let rel = rel.to_string_lossy().into_owned();
                if !inputs.iter().any(|i| is_under(&rel, i)) && found.insert(rel) {
                    queue.push(target);
                }
            }
        }
    }
    found.into_iter().collect()
}
