//! Errors that point at a line of an input file (`deploy/x.toml:12: ...`), and atomic writes.

use std::ops::Range;
use std::path::Path;

use anyhow::{Context, Result};

/// An input file's text, kept to turn byte spans into line numbers.
#[derive(Clone, Debug)]
pub struct Source {
    /// As given on the command line (project-relative inside a build action).
    pub path: String,
    pub text: String,
}

impl Source {
    pub fn read(path: &Path) -> Result<Source> {
        // The path is quoted into error messages and generated files' comments: one line.
        if path.to_string_lossy().chars().any(char::is_control) {
            anyhow::bail!(
                "{:?}: the file name holds a control character; rename the file",
                path
            );
        }
        let bytes =
            std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
        let shown = path.display().to_string();
        let text = String::from_utf8(bytes).map_err(|e| not_utf8(&shown, &e))?;
        Ok(Source { path: shown, text })
    }

    pub fn line(&self, span: &Range<usize>) -> usize {
        let end = span.start.min(self.text.len());
        self.text[..end].bytes().filter(|&b| b == b'\n').count() + 1
    }

    /// `path:line: msg` for a span of this file.
    pub fn at(&self, span: &Range<usize>, msg: impl std::fmt::Display) -> anyhow::Error {
        anyhow::anyhow!("{}:{}: {}", self.path, self.line(span), msg)
    }

    /// A TOML parse error with the line toml reports.
    pub fn toml_error(&self, e: toml::de::Error) -> anyhow::Error {
        let msg = e.message().to_string();
        match e.span() {
            Some(span) => self.at(&span, msg),
            None => anyhow::anyhow!("{}: {}", self.path, msg),
        }
    }
}

/// `path:LINE:COL: not UTF-8 (byte 0x.. at offset N)`: TOML is UTF-8, and the bare "stream
/// did not contain valid UTF-8" leaves the user searching the whole file for the byte.
fn not_utf8(path: &str, e: &std::string::FromUtf8Error) -> anyhow::Error {
    let bytes = e.as_bytes();
    let offset = e.utf8_error().valid_up_to();
    // Everything before `offset` is valid UTF-8, so lines and columns count characters there.
    let before = std::str::from_utf8(&bytes[..offset]).unwrap_or_default();
    let line = before.matches('\n').count() + 1;
    let col = before
        .rsplit('\n')
        .next()
        .unwrap_or_default()
        .chars()
        .count()
        + 1;
    anyhow::anyhow!(
        "{path}:{line}:{col}: not UTF-8 (byte {:#04x} at offset {offset}); a description is \
         UTF-8 text: re-save the file as UTF-8 (e.g. `iconv -f latin1 -t utf-8`) or remove \
         the character",
        bytes[offset]
    )
}

/// Write `text` to `path` through a temporary file in the same directory and a rename, so a
/// reader never sees a half-written file and a failed run leaves nothing behind.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_string())
        .unwrap_or_else(|| "out".into());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| {
        let _ = std::fs::remove_file(&tmp);
        format!("renaming to {}", path.display())
    })
}

/// Write several outputs only once all of them were produced without error.
pub fn write_all(outputs: &[(&Path, String)]) -> Result<()> {
    for (p, text) in outputs {
        write_atomic(p, text)?;
    }
    Ok(())
}
