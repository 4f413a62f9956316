//! Actions forge performs itself instead of spawning a command (buck2 does not count them as
//! commands either): `write`, `copy_file`, `symlinked_dir`, `copied_dir`. Each output is
//! built under a temporary name next to its final path and renamed into place.

use std::fs;
use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;

use anyhow::{bail, Context, Result};

use forge_core::{Action, ActionKind, ArtifactRef};

use crate::layout::{parent_of, relative_path, replace_with, temp_sibling};

fn copy_tree(src: &Path, dst: &Path) -> Result<()> {
    let meta = fs::metadata(src).with_context(|| format!("reading `{}`", src.display()))?;
    if !meta.is_dir() {
        fs::copy(src, dst)
            .with_context(|| format!("copying `{}` to `{}`", src.display(), dst.display()))?;
        return Ok(());
    }
    fs::create_dir_all(dst)?;
    fs::set_permissions(dst, fs::Permissions::from_mode(0o755))?;
    for entry in fs::read_dir(src)? {
        let entry = entry?;
        copy_tree(&entry.path(), &dst.join(entry.file_name()))?;
    }
    Ok(())
}

fn existing_source(root: &Path, a: &ArtifactRef) -> Result<std::path::PathBuf> {
    let p = root.join(a.path());
    if fs::metadata(&p).is_err() {
        bail!(
            "Missing input: `{}` does not exist. Create it, or fix the rule that lists it.",
            a.path()
        );
    }
    Ok(p)
}

/// Runs one in-process action, leaving its output at its declared path.
pub fn execute(action: &Action, root: &Path) -> Result<()> {
    let Some(out) = action.outputs.first() else {
        bail!("the action declares no output");
    };
    let dst = root.join(&out.path);
    fs::create_dir_all(dst.parent().expect("output has a parent"))?;
    let tmp = temp_sibling(&dst);
    let result = (|| -> Result<()> {
        match &action.kind {
            ActionKind::Write {
                content,
                is_executable,
            } => {
                fs::write(&tmp, content)?;
                let mode = if *is_executable { 0o755 } else { 0o644 };
                fs::set_permissions(&tmp, fs::Permissions::from_mode(mode))?;
            }
            ActionKind::Copy { src } => copy_tree(&existing_source(root, src)?, &tmp)?,
            ActionKind::SymlinkedDir { entries } => {
                fs::create_dir_all(&tmp)?;
                for (rel, art) in entries {
                    existing_source(root, art)?;
                    let link_rel = format!("{}/{rel}", out.path);
                    let target = relative_path(parent_of(&link_rel), art.path());
                    let link = tmp.join(rel);
                    fs::create_dir_all(link.parent().expect("entry has a parent"))?;
                    symlink(&target, &link)
                        .with_context(|| format!("linking `{link_rel}` -> `{target}`"))?;
                }
            }
            ActionKind::CopiedDir { entries } => {
                fs::create_dir_all(&tmp)?;
                for (rel, art) in entries {
                    let link = tmp.join(rel);
                    fs::create_dir_all(link.parent().expect("entry has a parent"))?;
                    copy_tree(&existing_source(root, art)?, &link)?;
                }
            }
            ActionKind::Run { .. } => bail!("a run action is not executed in-process"),
        }
        replace_with(&tmp, &dst)
            .with_context(|| format!("moving the output into `{}`", out.path))?;
        Ok(())
    })();
    if result.is_err() {
        let _ = crate::layout::remove_any(&tmp);
    }
    result
}
