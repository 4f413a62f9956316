//! `forge build --out PATH`: copies the one built target's one default output out of
//! buck-out, with buck2's semantics (buck2 `build --out`, app/buck2_client/src/commands/
//! build/out.rs): a file goes to PATH (into it when PATH is a directory, parents created);
//! a directory's contents are copied into PATH, merging with what is there; symlinks that stay
//! inside the output are kept as they are, others are made absolute; `-` streams files to
//! stdout (several targets allowed, no directory).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};

use crate::model::{ProvidersLabel, TargetOutputs};

/// The default output of each target, as an absolute path, checked as buck2 checks it.
fn single_outputs(
    root: &Path,
    targets: &[(ProvidersLabel, TargetOutputs)],
) -> Result<Vec<(String, PathBuf)>> {
    targets
        .iter()
        .map(|(l, o)| match o.default_outputs.as_slice() {
            [] => Err(anyhow!("target {l} produced zero default outputs")),
            [one] => Ok((l.to_string(), root.join(one.path()))),
            many => Err(anyhow!(
                "target {l} produced {} outputs, choice of output is ambiguous",
                many.len()
            )),
        })
        .collect()
}

pub(super) fn copy_out(
    root: &Path,
    cwd: &Path,
    targets: &[(ProvidersLabel, TargetOutputs)],
    out: &str,
) -> Result<()> {
    let outputs = single_outputs(root, targets)?;
    if out == "-" {
        use std::io::Write;
        let mut stdout = io::stdout().lock();
        for (label, path) in &outputs {
            if path.is_dir() {
                bail!("target {label} produces a default output that is a directory, and cannot be sent to stdout");
            }
        }
        for (_, path) in &outputs {
            let mut f =
                fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
            io::copy(&mut f, &mut stdout).context("Error writing build artifact to --out")?;
        }
        stdout.flush()?;
        return Ok(());
    }
    let [(_, from)] = outputs.as_slice() else {
        bail!("build command built multiple top-level targets, choice of output is ambiguous");
    };
    let dst = cwd.join(out);
    let meta = fs::metadata(from).with_context(|| "Error inspecting file metadata")?;
    if meta.is_dir() {
        let boundary = from.canonicalize()?;
        copy_directory(from, &dst, &boundary)
    } else {
        copy_file(from, &dst)
    }
    .with_context(|| format!("copying {} to --out {}", from.display(), dst.display()))
}

/// Removes what is at `p` (a file, a symlink or a tree), if anything.
fn remove_any(p: &Path) -> io::Result<()> {
    match fs::symlink_metadata(p) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(p),
        Ok(_) => fs::remove_file(p),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

fn copy_directory(src: &Path, dst: &Path, boundary: &Path) -> Result<()> {
    fs::create_dir_all(dst).with_context(|| format!("creating {}", dst.display()))?;
    for entry in
        fs::read_dir(src).with_context(|| format!("reading directory {}", src.display()))?
    {
        let entry = entry?;
        let (from, to) = (entry.path(), dst.join(entry.file_name()));
        let ty = entry.file_type()?;
        if ty.is_dir() {
            copy_directory(&from, &to, boundary)?;
        } else if ty.is_symlink() {
            remove_any(&to)?;
            let resolved = from.canonicalize()?;
            let target = if resolved.starts_with(boundary) {
                fs::read_link(&from)?
            } else {
                resolved
            };
            std::os::unix::fs::symlink(&target, &to)
                .with_context(|| format!("Creating symlink at {}", to.display()))?;
        } else {
            replace_file(&from, &to)?;
        }
    }
    Ok(())
}

/// Copies over `to`; a file copied out before is read-only (forge's outputs are), so one
/// that refuses to be opened for writing is replaced instead.
fn replace_file(from: &Path, to: &Path) -> Result<()> {
    match fs::copy(from, to) {
        Err(e)
            if e.kind() == io::ErrorKind::PermissionDenied
                && fs::symlink_metadata(to).is_ok_and(|m| m.is_file()) =>
        {
            fs::remove_file(to).with_context(|| format!("replacing {}", to.display()))?;
            fs::copy(from, to)
        }
        r => r,
    }
    .with_context(|| format!("Copying file {}", from.display()))?;
    Ok(())
}

fn copy_file(src: &Path, dst: &Path) -> Result<()> {
    if let Some(parent) = dst.parent() {
        fs::create_dir_all(parent)?;
    }
    let dst = if dst.is_dir() {
        dst.join(
            src.file_name()
                .ok_or_else(|| anyhow!("output has no name"))?,
        )
    } else {
        dst.to_path_buf()
    };
    replace_file(src, &dst)
}
