//! What a style tool's exit status means. Over a package's files, exit 0 passes and anything
//! else fails with the fix. Over a fixture with a deliberate slip the sense is inverted: the
//! tool must exit non-zero AND say why (each expected text in its output), so a tool that
//! crashed, or was not found, or rejected the fixture for another reason cannot pass.

use crate::args::Args;

/// How the tool ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Code(i32),
    /// Killed by a signal: never a verdict about the files.
    Signal(i32),
}

#[derive(Debug, PartialEq, Eq)]
pub struct Verdict {
    pub pass: bool,
    /// The line printed after the tool's own output.
    pub message: String,
}

pub fn judge(args: &Args, exit: Exit, output: &str) -> Verdict {
    let check = &args.check;
    let target = &args.target;
    if args.expect_rejection.is_empty() {
        return match exit {
            Exit::Code(0) => Verdict {
                pass: true,
                message: format!("{check}: the files of {target} are clean"),
            },
            Exit::Code(code) => Verdict {
                pass: false,
                message: format!(
                    "{check} found problems (exit {code}) in the files of {target}, listed above.\n\
                     To fix: {}",
                    args.fix
                ),
            },
            Exit::Signal(sig) => killed(check, target, sig),
        };
    }
    match exit {
        Exit::Code(0) => Verdict {
            pass: false,
            message: format!(
                "{check} accepted the fixture of {target}, which has a deliberate slip: the \
                 check would let that slip through"
            ),
        },
        Exit::Code(code) => {
            let missing: Vec<&str> = args
                .expect_rejection
                .iter()
                .map(String::as_str)
                .filter(|t| !output.contains(t))
                .collect();
            if missing.is_empty() {
                Verdict {
                    pass: true,
                    message: format!(
                        "{check} rejected the fixture of {target} as it must (exit {code}, \
                         output names {})",
                        quoted(&args.expect_rejection)
                    ),
                }
            } else {
                Verdict {
                    pass: false,
                    message: format!(
                        "{check} failed on the fixture of {target} (exit {code}) but not for the \
                         deliberate slip: its output lacks {}",
                        quoted(&missing)
                    ),
                }
            }
        }
        Exit::Signal(sig) => killed(check, target, sig),
    }
}

fn killed(check: &str, target: &str, sig: i32) -> Verdict {
    Verdict {
        pass: false,
        message: format!("{check} was killed by signal {sig} while checking {target}"),
    }
}

fn quoted<S: AsRef<str>>(texts: &[S]) -> String {
    texts
        .iter()
        .map(|t| format!("`{}`", t.as_ref()))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(expect: &[&str]) -> Args {
        Args {
            check: "shellcheck".into(),
            target: "//pkg:shellcheck".into(),
            fix: "quote it".into(),
            expect_rejection: expect.iter().map(|s| s.to_string()).collect(),
            command: vec!["shellcheck".into()],
            replay: None,
        }
    }

    #[test]
    fn clean_files_pass_and_findings_fail_with_the_fix() {
        assert!(judge(&args(&[]), Exit::Code(0), "").pass);
        let v = judge(&args(&[]), Exit::Code(1), "SC2086");
        assert!(!v.pass);
        assert!(v.message.contains("//pkg:shellcheck"), "{}", v.message);
        assert!(v.message.contains("To fix: quote it"), "{}", v.message);
    }

    #[test]
    fn a_fixture_passes_only_when_rejected_for_its_slip() {
        let a = args(&["SC2086", "bad.sh"]);
        assert!(judge(&a, Exit::Code(1), "In bad.sh line 2: SC2086").pass);
        let accepted = judge(&a, Exit::Code(0), "");
        assert!(!accepted.pass);
        assert!(
            accepted.message.contains("accepted"),
            "{}",
            accepted.message
        );
        let other = judge(&a, Exit::Code(1), "In bad.sh line 2: SC2034");
        assert!(!other.pass);
        assert!(other.message.contains("`SC2086`"), "{}", other.message);
        assert!(!judge(&a, Exit::Signal(9), "SC2086 bad.sh").pass);
    }
}
