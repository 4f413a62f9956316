//! A tool's run kept for a later verdict (`style-check --record FILE -- TOOL ARGS...`, then
//! `style-check --replay FILE --check ...`). clippy runs this way: as a build action, so the
//! scheduler runs it as the cargo action it is (one at a time in the shared target dir, never
//! holding a job slot while it waits for cargo's lock) and caches it, and the test only judges
//! what the action recorded.
//!
//! The file: one header line, `exit CODE` or `signal N`, then the tool's stdout and stderr as
//! it wrote them (stdout first).

use crate::verdict::Exit;

/// A recorded run: how the tool ended and what it printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recorded {
    pub exit: Exit,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

impl Recorded {
    pub fn encode(&self) -> Vec<u8> {
        let header = match self.exit {
            Exit::Code(c) => format!("exit {c}\n"),
            Exit::Signal(s) => format!("signal {s}\n"),
        };
        let mut out = header.into_bytes();
        out.extend_from_slice(format!("stdout {}\n", self.stdout.len()).as_bytes());
        out.extend_from_slice(&self.stdout);
        out.extend_from_slice(&self.stderr);
        out
    }

    /// The run `encode` wrote; an error names what is wrong with the file.
    pub fn decode(bytes: &[u8]) -> Result<Recorded, String> {
        let (exit_line, rest) = split_line(bytes).ok_or("no header line")?;
        let exit = match exit_line.split_once(' ') {
            Some(("exit", n)) => Exit::Code(number(n)?),
            Some(("signal", n)) => Exit::Signal(number(n)?),
            _ => {
                return Err(format!(
                    "header `{exit_line}` is not `exit N` or `signal N`"
                ))
            }
        };
        let (len_line, rest) = split_line(rest).ok_or("no `stdout LEN` line")?;
        let len: usize = match len_line.strip_prefix("stdout ") {
            Some(n) => n.parse().map_err(|_| format!("`{len_line}`: bad length"))?,
            None => return Err(format!("`{len_line}` is not `stdout LEN`")),
        };
        if rest.len() < len {
            return Err(format!(
                "stdout of {len} bytes announced, {} left",
                rest.len()
            ));
        }
        Ok(Recorded {
            exit,
            stdout: rest[..len].to_vec(),
            stderr: rest[len..].to_vec(),
        })
    }
}

fn split_line(bytes: &[u8]) -> Option<(&str, &[u8])> {
    let end = bytes.iter().position(|&b| b == b'\n')?;
    Some((std::str::from_utf8(&bytes[..end]).ok()?, &bytes[end + 1..]))
}

fn number(text: &str) -> Result<i32, String> {
    text.parse()
        .map_err(|_| format!("`{text}` is not a number"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_survives_the_file_with_its_bytes() {
        for exit in [Exit::Code(0), Exit::Code(101), Exit::Signal(9)] {
            let run = Recorded {
                exit,
                stdout: b"line\nexit 0\n".to_vec(),
                stderr: b"warning: unused\n\xff".to_vec(),
            };
            assert_eq!(Recorded::decode(&run.encode()), Ok(run));
        }
    }

    #[test]
    fn the_file_is_the_header_then_the_bytes() {
        let run = Recorded {
            exit: Exit::Code(101),
            stdout: b"ab\n".to_vec(),
            stderr: b"error: x\n".to_vec(),
        };
        assert_eq!(run.encode(), b"exit 101\nstdout 3\nab\nerror: x\n".to_vec());
    }

    #[test]
    fn a_damaged_file_is_refused_with_the_reason() {
        assert!(Recorded::decode(b"").unwrap_err().contains("header"));
        assert!(Recorded::decode(b"status 0\nstdout 0\n")
            .unwrap_err()
            .contains("`status 0`"));
        assert!(Recorded::decode(b"exit 0\nstdout 5\nab")
            .unwrap_err()
            .contains("5 bytes"));
    }
}
