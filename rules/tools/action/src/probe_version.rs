//! `action probe-version OUT [--file PATH]... -- CMD [ARGS...] [-- CMD [ARGS...]]...` (was
//! rules/tools/toolchain/probe_version.sh): runs each command and writes the command line
//! plus its output to OUT, after the content of each `--file` (an identity file a bootstrap
//! step wrote for something that is not a command, e.g. .venv/hls-types/.forge-stamp). Toolchains feed OUT into their actions as an input, so the tool's
//! version is part of every action key. OUT is written whole or not at all (tmp + rename).

use crate::util::{fail, run_logged, split_at_dashes, Result, TmpFile};
use std::fs;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(clap::Args)]
pub struct Args {
    /// the output file
    out: PathBuf,
    /// a file whose content is part of the identity (recorded before the commands)
    #[arg(long = "file", value_name = "PATH")]
    files: Vec<PathBuf>,
    /// CMD [ARGS...] [-- CMD [ARGS...]]..., after `--`
    #[arg(last = true, required = true, value_name = "CMD")]
    commands: Vec<String>,
}

/// `command -v NAME`: a name with a slash is a path, any other is looked up on PATH.
fn on_path(name: &str) -> bool {
    let executable = |p: &Path| {
        p.is_file()
            && fs::metadata(p)
                .map(|m| m.permissions().mode() & 0o111 != 0)
                .unwrap_or(false)
    };
    if name.contains('/') {
        return executable(Path::new(name));
    }
    std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).any(|dir| executable(&dir.join(name))))
        .unwrap_or(false)
}

pub fn run(a: Args) -> Result {
    let tmp = TmpFile::beside(&a.out);
    fs::write(tmp.path(), "").or_else(|e| {
        fail(
            3,
            format!("error: cannot write {}: {e}", tmp.path().display()),
        )
    })?;
    for file in &a.files {
        let content = fs::read(file).or_else(|e| {
            fail(
                3,
                format!(
                    "error: cannot read {}: {e}. It is written by `./forge`'s bootstrap \
                     (tools/bootstrap); run ./forge once, or point the toolchain at it in toolchains/BUCK.",
                    file.display()
                ),
            )
        })?;
        let mut f = fs::OpenOptions::new()
            .append(true)
            .open(tmp.path())
            .or_else(|e| {
                fail(
                    3,
                    format!("error: cannot write {}: {e}", tmp.path().display()),
                )
            })?;
        let written = writeln!(f, "# {}", file.display())
            .and_then(|_| f.write_all(&content))
            .and_then(|_| {
                if content.ends_with(b"\n") {
                    Ok(())
                } else {
                    writeln!(f)
                }
            });
        written.or_else(|e| {
            fail(
                3,
                format!("error: cannot write {}: {e}", tmp.path().display()),
            )
        })?;
    }
    for command in split_at_dashes(&a.commands) {
        if !on_path(&command[0]) {
            eprintln!(
                "error: `{}` is not on PATH (PATH={}).",
                command[0],
                std::env::var("PATH").unwrap_or_default()
            );
            return fail(
                3,
                "Install it (./forge installs the packages in tools/bootstrap/apt.txt) or point the toolchain at it in toolchains/BUCK.",
            );
        }
        let line = command.join(" ");
        let header = fs::OpenOptions::new()
            .append(true)
            .open(tmp.path())
            .and_then(|mut f| writeln!(f, "$ {line}"));
        header.or_else(|e| {
            fail(
                3,
                format!("error: cannot write {}: {e}", tmp.path().display()),
            )
        })?;
        let ok = run_logged(
            Command::new(&command[0]).args(&command[1..]),
            tmp.path(),
            true,
        )
        .map(|s| s.success())
        .unwrap_or(false);
        if !ok {
            eprintln!("error: `{line}` failed; its output:");
            eprint!(
                "{}",
                String::from_utf8_lossy(&fs::read(tmp.path()).unwrap_or_default())
            );
            return Err(crate::util::Exit(3));
        }
    }
    tmp.commit()
        .or_else(|e| fail(3, format!("error: cannot write {}: {e}", a.out.display())))
}
