//! What the subcommands share: the exit status type, temporary files that vanish unless
//! committed (the scripts' `trap 'rm -f ...' EXIT` + `mv`), running a command with its
//! stdout and stderr in one file, and shell-quoting for the command lines printed to replay.

use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

/// A subcommand's failure: its messages are printed already; this is the exit status.
#[derive(Debug)]
pub struct Exit(pub u8);

pub type Result<T = ()> = std::result::Result<T, Exit>;

/// Prints `message` to stderr and fails with `code`.
pub fn fail<T>(code: u8, message: impl AsRef<str>) -> Result<T> {
    eprintln!("{}", message.as_ref());
    Err(Exit(code))
}

/// `OUT.tmp.<pid>` beside `out`: removed when dropped, unless renamed onto `out` by `commit`,
/// so a failed (or killed) helper never leaves a partial output under the declared name.
pub struct TmpFile {
    tmp: PathBuf,
    out: PathBuf,
    committed: bool,
}

impl TmpFile {
    pub fn beside(out: &Path) -> TmpFile {
        let mut name = out.as_os_str().to_owned();
        name.push(format!(".tmp.{}", std::process::id()));
        TmpFile {
            tmp: PathBuf::from(name),
            out: out.to_path_buf(),
            committed: false,
        }
    }

    pub fn path(&self) -> &Path {
        &self.tmp
    }

    /// The atomic step: the output appears complete or not at all.
    pub fn commit(mut self) -> io::Result<()> {
        fs::rename(&self.tmp, &self.out)?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for TmpFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = fs::remove_file(&self.tmp);
        }
    }
}

/// Runs `cmd` with stdout and stderr both appended to `log` (the scripts' `>>log 2>&1`).
pub fn run_logged(cmd: &mut Command, log: &Path, append: bool) -> io::Result<ExitStatus> {
    let file = File::options()
        .create(true)
        .append(append)
        .write(true)
        .truncate(!append)
        .open(log)?;
    cmd.stdin(Stdio::null())
        .stdout(file.try_clone()?)
        .stderr(file)
        .status()
}

/// `arg` as a shell word: unchanged when it needs no quoting (plusargs, paths), else in
/// single quotes, so a printed command line can be pasted back as it ran.
pub fn shell_word(arg: &str) -> String {
    let plain = !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"+-_=./,:@%^".contains(&b));
    if plain {
        arg.to_string()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// A command line as the shell would replay it.
pub fn shell_line<S: AsRef<str>>(words: &[S]) -> String {
    words
        .iter()
        .map(|w| shell_word(w.as_ref()))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Splits `args` at each `--` into command lines (empty ones dropped).
pub fn split_at_dashes(args: &[String]) -> Vec<Vec<String>> {
    let mut sets = vec![];
    let mut cur = vec![];
    for a in args {
        if a == "--" {
            if !cur.is_empty() {
                sets.push(std::mem::take(&mut cur));
            }
        } else {
            cur.push(a.clone());
        }
    }
    if !cur.is_empty() {
        sets.push(cur);
    }
    sets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("+seed=1"), "+seed=1");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
        assert_eq!(shell_word(""), "''");
    }

    #[test]
    fn sets_split_at_dashes_and_keep_words() {
        let args: Vec<String> = ["+a=1 2", "+b", "--", "--", "+c"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            split_at_dashes(&args),
            vec![
                vec!["+a=1 2".to_string(), "+b".to_string()],
                vec!["+c".to_string()]
            ]
        );
    }

    #[test]
    fn an_uncommitted_tmp_file_is_removed() {
        let dir = std::env::temp_dir().join(format!("forge-action-tmp-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        // removed also when an assertion fails
        struct Removed<'a>(&'a Path);
        impl Drop for Removed<'_> {
            fn drop(&mut self) {
                let _ = fs::remove_dir_all(self.0);
            }
        }
        let _removed = Removed(&dir);
        let out = dir.join("out");
        {
            let tmp = TmpFile::beside(&out);
            fs::write(tmp.path(), "x").unwrap();
        }
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
        let tmp = TmpFile::beside(&out);
        fs::write(tmp.path(), "y").unwrap();
        tmp.commit().unwrap();
        assert_eq!(fs::read_to_string(&out).unwrap(), "y");
    }
}
