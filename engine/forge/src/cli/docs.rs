//! `forge docs starlark PATTERN...`: buck2's command for the documentation of user-defined
//! symbols. buck2 prints JSON or writes one Markdown file per symbol; forge prints one
//! Markdown page (`--format markdown`, the only format so far), which is what the project's
//! rule reference (`docs/rules.md`) is generated with.

use anyhow::{bail, Result};
use clap::{Subcommand, ValueEnum};

use super::{Common, Session};

#[derive(Clone, Copy, Debug, ValueEnum)]
pub(super) enum DocsFormat {
    /// One Markdown page on stdout: a section per file, a heading per symbol.
    Markdown,
    /// buck2's JSON (not implemented by forge).
    Json,
}

#[derive(Subcommand, Debug)]
pub(super) enum DocsCommand {
    /// The rules, providers and macros of `.bzl` files: `//pkg:file.bzl`.
    Starlark {
        #[arg(required = true)]
        patterns: Vec<String>,
        #[arg(long, value_enum, default_value_t = DocsFormat::Markdown)]
        format: DocsFormat,
        #[command(flatten)]
        common: Common,
    },
}

impl DocsCommand {
    pub(super) fn common(&self) -> &Common {
        match self {
            DocsCommand::Starlark { common, .. } => common,
        }
    }
}

pub(super) fn docs(s: &Session, what: &DocsCommand) -> Result<i32> {
    let DocsCommand::Starlark {
        patterns, format, ..
    } = what;
    if let DocsFormat::Json = format {
        bail!("`forge docs starlark --format json` is not supported by forge yet; use `--format markdown`");
    }
    let files = crate::docs::collect(&s.loader, patterns)?;
    print!("{}", crate::docs::render_markdown(&files));
    println!();
    Ok(0)
}
