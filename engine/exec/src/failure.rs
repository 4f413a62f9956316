//! Action failures, reported the way buck2 reports them (`Action failed: ...`, the command
//! as an `env -C ... --` line, `Stdout:`/`Stderr:` blocks).

use std::fmt;
use std::path::Path;

use forge_core::{Action, OutputDecl, TargetLabel};

/// The configuration hash forge uses for the unspecified platform (as buck2 prints).
const UNSPECIFIED_CFG: &str = "1ef78538d8598cb2";

/// One failed action.
#[derive(Clone, Debug)]
pub struct ActionFailure {
    pub owner: TargetLabel,
    /// `root//pkg:name (<unspecified>) (category identifier)`.
    pub action: String,
    /// The full report, starting with `Action failed: `.
    pub message: String,
}

impl fmt::Display for ActionFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ActionFailure {}

/// The error `Executor::build` returns when actions failed; downcast it from the
/// `anyhow::Error` to list the failures (`BUILD ERRORS (n)`) and the failed targets.
#[derive(Clone, Debug)]
pub struct BuildFailed {
    pub failures: Vec<ActionFailure>,
}

impl fmt::Display for BuildFailed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let texts: Vec<&str> = self.failures.iter().map(|x| x.message.as_str()).collect();
        f.write_str(&texts.join("\n\n"))
    }
}

impl std::error::Error for BuildFailed {}

/// The action's name as buck2 prints it, with the configuration when forge knows it.
pub fn action_title(action: &Action) -> String {
    let unspecified = action
        .outputs
        .first()
        .map(|o: &OutputDecl| o.path.split('/').nth(4) == Some(UNSPECIFIED_CFG))
        .unwrap_or(true);
    let cfg = if unspecified { " (<unspecified>)" } else { "" };
    match &action.identifier {
        Some(id) => format!("{}{cfg} ({} {id})", action.owner, action.category),
        None => format!("{}{cfg} ({})", action.owner, action.category),
    }
}

pub fn failure(action: &Action, body: &str) -> ActionFailure {
    let title = action_title(action);
    ActionFailure {
        owner: action.owner.clone(),
        message: format!("Action failed: {title}\n{body}"),
        action: title,
    }
}

/// POSIX shell quoting: plain words stay as they are.
pub fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,+@%".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// `env -C <root> -- 'BUCK_SCRATCH_PATH=...' 'K=V' argv...`
pub fn command_line(root: &str, env: &[(String, String)], argv: &[String]) -> String {
    let mut parts = vec![
        "env".to_string(),
        "-C".into(),
        shell_quote(root),
        "--".into(),
    ];
    for (k, v) in env {
        parts.push(format!("'{}'", format!("{k}={v}").replace('\'', r"'\''")));
    }
    parts.extend(argv.iter().map(|a| shell_quote(a)));
    parts.join(" ")
}

/// Writes `head` and both streams whole to `buck-out/forge/log/<kind>/<name>.log` under
/// `root`, every character of `name` but ASCII letters, digits, `-` and `_` as `_`; the
/// file's project-relative path, or `None` when it could not be written.
pub(crate) fn write_full_log(
    root: &Path,
    kind: &str,
    name: &str,
    head: &str,
    stdout: &[u8],
    stderr: &[u8],
) -> Option<String> {
    let name: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let rel = format!("buck-out/forge/log/{kind}/{name}.log");
    let mut text = format!("{head}\n---- STDOUT ----\n").into_bytes();
    text.extend_from_slice(stdout);
    text.extend_from_slice(b"\n---- STDERR ----\n");
    text.extend_from_slice(stderr);
    crate::layout::write_atomic(&root.join(&rel), &text)
        .is_ok()
        .then_some(rel)
}

/// Bytes of a stream shown in a failure at most, however few lines it has.
const TAIL_BYTES: usize = 16 << 10;

/// `text` cut to about `max` bytes (its start, at a character boundary), with a note.
pub fn clip(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{} [... {} more bytes, see the full log]",
        &text[..end],
        text.len() - end
    )
}

/// The last `max_lines` lines of a stream (and at most [`TAIL_BYTES`] of them), with a note
/// when some were dropped.
pub fn tail(bytes: &[u8], max_lines: usize) -> String {
    let (cut, bytes) = if bytes.len() > TAIL_BYTES {
        let start = bytes.len() - TAIL_BYTES;
        (start, &bytes[start..])
    } else {
        (0, bytes)
    };
    let text = String::from_utf8_lossy(bytes);
    let text = if cut > 0 {
        format!("[{cut} earlier bytes omitted] {text}")
    } else {
        text.into_owned()
    };
    let text = text.trim_end_matches('\n');
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() <= max_lines {
        return text.to_string();
    }
    format!(
        "[{} earlier lines omitted]\n{}",
        lines.len() - max_lines,
        lines[lines.len() - max_lines..].join("\n")
    )
}

/// `Stdout:` / `Stderr:` blocks, `<empty>` when a stream is empty.
pub fn streams_block(stdout: &[u8], stderr: &[u8], max_lines: usize) -> String {
    let block = |name: &str, bytes: &[u8]| {
        if bytes.iter().all(|b| b.is_ascii_whitespace()) {
            format!("{name}: <empty>")
        } else {
            format!("{name}:\n{}", tail(bytes, max_lines))
        }
    };
    format!("{}\n{}", block("Stdout", stdout), block("Stderr", stderr))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting_round_trips_through_sh() {
        let args = ["plain", "two words", "it's", "$HOME", "", "a\"b"];
        let line = args.iter().map(|a| shell_quote(a)).collect::<Vec<_>>();
        let script = format!("for a in {}; do printf '[%s]' \"$a\"; done", line.join(" "));
        let out = std::process::Command::new("/bin/sh")
            .args(["-c", &script])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8(out.stdout).unwrap(),
            "[plain][two words][it's][$HOME][][a\"b]"
        );
    }
}
