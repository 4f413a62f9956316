//! `style-check --check NAME --target LABEL --fix TEXT [--expect-rejection TEXT]... -- TOOL ARGS...`
//! or, judging a run recorded earlier (src/record.rs), `... --replay FILE` and no tool.

use std::fmt;

/// What the rule asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    /// The check's name as the user knows it (`rustfmt`, `clippy`, ...).
    pub check: String,
    /// The test target, so the verdict names where the files are declared.
    pub target: String,
    /// How to fix what the tool reports (one line, shown on failure).
    pub fix: String,
    /// Non-empty for a fixture with a deliberate slip: the tool must reject it, and its
    /// output must contain each of these texts (the file and the rule it breaks).
    pub expect_rejection: Vec<String>,
    /// The tool and its arguments (empty with `replay`).
    pub command: Vec<String>,
    /// A run of the tool recorded by `style-check --record` to judge instead of running it.
    pub replay: Option<String>,
}

#[derive(Debug, PartialEq, Eq)]
pub struct UsageError(pub String);

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "style-check: {}\nusage: style-check --check NAME --target LABEL --fix TEXT \
             [--expect-rejection TEXT]... (-- TOOL ARGS... | --replay FILE)\n       \
             style-check --record FILE -- TOOL ARGS...",
            self.0
        )
    }
}

impl Args {
    pub fn parse<I: IntoIterator<Item = String>>(argv: I) -> Result<Args, UsageError> {
        let mut check = None;
        let mut target = None;
        let mut fix = None;
        let mut expect_rejection = Vec::new();
        let mut replay = None;
        let mut it = argv.into_iter();
        let mut command = Vec::new();
        while let Some(flag) = it.next() {
            if flag == "--" {
                command = it.by_ref().collect();
                break;
            }
            let mut value = || {
                it.next()
                    .ok_or_else(|| UsageError(format!("`{flag}` needs a value")))
            };
            match flag.as_str() {
                "--check" => check = Some(value()?),
                "--target" => target = Some(value()?),
                "--fix" => fix = Some(value()?),
                "--expect-rejection" => expect_rejection.push(value()?),
                "--replay" => replay = Some(value()?),
                _ => return Err(UsageError(format!("unknown argument `{flag}`"))),
            }
        }
        let required = |v: Option<String>, name: &str| {
            v.ok_or_else(|| UsageError(format!("`{name}` is required")))
        };
        let args = Args {
            check: required(check, "--check")?,
            target: required(target, "--target")?,
            fix: required(fix, "--fix")?,
            expect_rejection,
            command,
            replay,
        };
        match (args.command.is_empty(), &args.replay) {
            (true, None) => Err(UsageError("no tool to run after `--`".into())),
            (false, Some(_)) => Err(UsageError(
                "`--replay` judges a recorded run: give no tool after `--`".into(),
            )),
            _ => Ok(args),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(v: &[&str]) -> Result<Args, UsageError> {
        Args::parse(v.iter().map(|s| s.to_string()))
    }

    #[test]
    fn reads_flags_and_the_command_after_the_separator() {
        let a = parse(&[
            "--check",
            "ruff",
            "--target",
            "//finn/flow:ruff",
            "--fix",
            "ruff check --fix",
            "--expect-rejection",
            "F401",
            "--",
            "ruff",
            "check",
            "--",
            "a.py",
        ])
        .unwrap();
        assert_eq!(a.check, "ruff");
        assert_eq!(a.target, "//finn/flow:ruff");
        assert_eq!(a.expect_rejection, vec!["F401"]);
        // a second `--` belongs to the tool (clippy's `-- -D warnings`)
        assert_eq!(a.command, vec!["ruff", "check", "--", "a.py"]);
        assert_eq!(a.replay, None);
    }

    #[test]
    fn replay_takes_a_record_instead_of_a_tool() {
        let a = parse(&[
            "--check", "clippy", "--target", "//x:c", "--fix", "f", "--replay", "r",
        ])
        .unwrap();
        assert_eq!(a.replay.as_deref(), Some("r"));
        assert!(a.command.is_empty());
    }

    #[test]
    fn names_what_is_missing() {
        let e = parse(&["--check", "x", "--fix", "y", "--", "true"]).unwrap_err();
        assert!(e.0.contains("--target"), "{e}");
        let e = parse(&["--check", "x", "--target", "t", "--fix", "y"]).unwrap_err();
        assert!(e.0.contains("no tool"), "{e}");
        let e = parse(&["--check"]).unwrap_err();
        assert!(e.0.contains("`--check` needs a value"), "{e}");
        let e = parse(&[
            "--check", "x", "--target", "t", "--fix", "y", "--replay", "r", "--", "true",
        ])
        .unwrap_err();
        assert!(e.0.contains("no tool after"), "{e}");
        let e = parse(&["--colour", "red"]).unwrap_err();
        assert!(e.0.contains("`--colour`"), "{e}");
    }
}
