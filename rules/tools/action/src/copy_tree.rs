//! `action copy-tree SRC OUT`: copies the directory SRC (files and subdirectories; symlinks
//! followed) to the declared output directory OUT. It turns a tree the bootstrap put outside
//! the build graph (e.g. .venv/hls-types/include, AMD's HLS headers) into an artifact, so the
//! actions that read it declare it as an input: its content is part of their keys and they can
//! run on a worker that has no `.venv`. OUT appears complete or not at all (a temporary
//! directory beside it is renamed onto it).

use crate::util::{fail, Result};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// the directory to copy
    src: PathBuf,
    /// the output directory (must not exist yet, or is replaced)
    out: PathBuf,
}

fn copy_dir(src: &Path, dst: &Path) -> io::Result<usize> {
    fs::create_dir_all(dst)?;
    let mut entries: Vec<_> = fs::read_dir(src)?.collect::<io::Result<_>>()?;
    entries.sort_by_key(|e| e.file_name());
    let mut files = 0;
    for entry in entries {
        let from = entry.path();
        let to = dst.join(entry.file_name());
        if fs::metadata(&from)?.is_dir() {
            files += copy_dir(&from, &to)?;
        } else {
            fs::copy(&from, &to)?;
            files += 1;
        }
    }
    Ok(files)
}

pub fn run(a: Args) -> Result {
    if !a.src.is_dir() {
        return fail(
            3,
            format!(
                "error: {} is not a directory. It is written by `./forge`'s bootstrap \
                 (tools/bootstrap); run ./forge once, or point the toolchain at it in toolchains/BUCK.",
                a.src.display()
            ),
        );
    }
    let mut name = a.out.as_os_str().to_owned();
    name.push(format!(".tmp.{}", std::process::id()));
    let tmp = PathBuf::from(name);
    let _ = fs::remove_dir_all(&tmp);
    let copied = copy_dir(&a.src, &tmp).and_then(|n| {
        if n == 0 {
            return Err(io::Error::other("no files in it"));
        }
        if a.out.exists() {
            fs::remove_dir_all(&a.out)?;
        }
        fs::rename(&tmp, &a.out)
    });
    if let Err(e) = copied {
        let _ = fs::remove_dir_all(&tmp);
        return fail(
            3,
            format!(
                "error: copying {} to {}: {e}",
                a.src.display(),
                a.out.display()
            ),
        );
    }
    Ok(())
}
