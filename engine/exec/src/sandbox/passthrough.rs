//! Where a project-relative `[forge] sandbox_passthrough` path really is. A checkout's
//! `.venv` is often a symlink into another checkout (whose `.venv` may be one again), and a
//! sandbox must show the directory the chain ends at, both at the project path and at its own
//! path (a venv's scripts name their interpreter by that path in their `#!` line).
//!
//! The chain is resolved on the host, before a sandbox is set up: inside, the links' targets
//! may be hidden by the sandbox itself (bubblewrap's private `/tmp` hides a clone under
//! `/tmp`, the fresh tmpfs at the project root hides a target inside the project).

use std::path::{Path, PathBuf};

use crate::sandbox::relative_passthrough;

/// One existing passthrough path, resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Passthrough {
    /// Project-relative, as `.buckconfig` names it.
    pub rel: String,
    /// The directory (or file) it resolves to: absolute, every symlink followed.
    pub real: PathBuf,
    /// `real` relative to the project root when it lies inside the project at another path
    /// than `rel` (a link to a sibling directory of the checkout): shown there too.
    pub real_in_project: Option<String>,
}

impl Passthrough {
    /// Where `real` must also be shown outside the project root (`None`: inside it).
    pub fn real_outside(&self, root: &Path) -> Option<&Path> {
        (!self.real.starts_with(root)).then_some(self.real.as_path())
    }
}

/// The project-relative passthrough paths of `passthrough` that exist under `root` (a
/// canonical path), resolved. A missing one is left out, as the sandbox has nothing to show.
pub fn resolve(root: &Path, passthrough: &[String]) -> Vec<Passthrough> {
    relative_passthrough(passthrough)
        .filter_map(|rel| {
            let real = std::fs::canonicalize(root.join(rel)).ok()?;
            let real_in_project = real
                .strip_prefix(root)
                .ok()
                .map(|r| r.to_string_lossy().into_owned())
                .filter(|r| r != rel && !r.is_empty());
            Some(Passthrough {
                rel: rel.to_string(),
                real,
                real_in_project,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn a_chain_of_links_resolves_to_its_end() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().canonicalize().unwrap();
        let root = base.join("copy");
        std::fs::create_dir_all(base.join("env")).unwrap();
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(base.join("clone")).unwrap();
        symlink(base.join("env"), base.join("clone/.venv")).unwrap();
        symlink(base.join("clone/.venv"), root.join(".venv")).unwrap();
        std::fs::create_dir_all(root.join("shared/target")).unwrap();
        symlink("shared/target", root.join("target")).unwrap();
        std::fs::create_dir_all(root.join("plain")).unwrap();
        let got = resolve(
            &root,
            &[
                ".venv".into(),
                "target/".into(),
                "plain".into(),
                "missing".into(),
                "/abs".into(),
            ],
        );
        assert_eq!(
            got,
            vec![
                Passthrough {
                    rel: ".venv".into(),
                    real: base.join("env"),
                    real_in_project: None,
                },
                Passthrough {
                    rel: "target".into(),
                    real: root.join("shared/target"),
                    real_in_project: Some("shared/target".into()),
                },
                Passthrough {
                    rel: "plain".into(),
                    real: root.join("plain"),
                    real_in_project: None,
                },
            ]
        );
        assert_eq!(got[0].real_outside(&root), Some(base.join("env").as_path()));
        assert_eq!(got[1].real_outside(&root), None);
    }
}
