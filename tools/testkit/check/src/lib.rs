//! testkit-check: what the shell tests of deployments and of the Slurm test cluster read
//! from files and numbers, in one place instead of inline `python3 -c` copies in every test
//! (README.md beside this crate lists the subcommands).
//!
//! Every subcommand returns its stdout on success, or an [`Error`]: `Bad` for input the
//! checker cannot read (exit 2: a missing file, JSON that is no topology), `Failed` for a
//! check that read its input and found it wrong (exit 1), each message naming the file
//! and, where there is one, the line.

pub mod cli;
pub mod csv;
pub mod job_log;
pub mod numbers;
pub mod port;
pub mod topology;

use std::fmt;

/// Why a subcommand did not succeed.
#[derive(Debug, PartialEq, Eq)]
pub enum Error {
    /// The input cannot be read as what it should be (exit 2).
    Bad(String),
    /// The input was read and a check on it failed; one message per finding (exit 1).
    Failed(Vec<String>),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Bad(m) => write!(f, "testkit-check: {m}"),
            Error::Failed(found) => {
                for (i, m) in found.iter().enumerate() {
                    if i > 0 {
                        writeln!(f)?;
                    }
                    write!(f, "testkit-check: {m}")?;
                }
                Ok(())
            }
        }
    }
}

/// Reads `path` as text, or says which file could not be read.
pub fn read(path: &str) -> Result<String, Error> {
    std::fs::read_to_string(path).map_err(|e| Error::Bad(format!("cannot read {path}: {e}")))
}
