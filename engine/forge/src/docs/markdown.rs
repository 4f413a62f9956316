//! One Markdown page for the documented files: per file a section, per symbol a heading with
//! its kind, how to load it, its doc, and a table of its attributes, fields or parameters.

use std::fmt::Write;

use super::collect::{FileDocs, Param, SymbolKind};

/// `//rules:cargo.bzl`, `@toolchains//:fpga.bzl`: the file as `load()` names it.
fn load_path(file: &FileDocs) -> String {
    let (dir, name) = match file.path.rsplit_once('/') {
        Some((d, n)) => (d, n),
        None => ("", file.path.as_str()),
    };
    let cell = if file.cell == "root" {
        String::new()
    } else {
        format!("@{}", file.cell)
    };
    format!("{cell}//{dir}:{name}")
}

/// The `load()` a BUCK or .bzl file writes to get `symbol` out of `file`.
fn load_line(file: &FileDocs, symbol: &str) -> String {
    format!("load(\"{}\", \"{symbol}\")", load_path(file))
}

/// Table cells hold one line: pipes escaped, line breaks as `<br>`.
fn cell(s: &str) -> String {
    s.trim().replace('|', "\\|").replace('\n', "<br>")
}

fn code(s: &str) -> String {
    if s.is_empty() {
        String::new()
    } else {
        format!("`{}`", s.replace('|', "\\|"))
    }
}

fn table(out: &mut String, first: &str, params: &[Param]) {
    if params.is_empty() {
        return;
    }
    let _ = writeln!(out, "| {first} | type | default | |");
    out.push_str("|---|---|---|---|\n");
    for p in params {
        let default = match &p.default {
            None => "required".to_owned(),
            Some(d) => code(d),
        };
        let _ = writeln!(
            out,
            "| `{}` | {} | {} | {} |",
            p.name,
            code(&p.ty),
            default,
            cell(&p.doc)
        );
    }
    out.push('\n');
}

/// The page body (no title): the caller adds its own heading and preamble.
pub fn render_markdown(files: &[FileDocs]) -> String {
    let mut out = String::new();
    for f in files
        .iter()
        .filter(|f| !f.symbols.is_empty() || !f.doc.is_empty())
    {
        let _ = writeln!(out, "## `{}`\n", load_path(f));
        if !f.doc.is_empty() {
            let _ = writeln!(out, "{}\n", f.doc.trim());
        }
        for s in &f.symbols {
            let kind = match s.kind {
                SymbolKind::Rule { .. } => "rule",
                SymbolKind::Provider { .. } => "provider",
                SymbolKind::Function { .. } => "macro",
            };
            let _ = writeln!(out, "### `{}`\n", s.name);
            let _ = writeln!(out, "*{kind}* · `{}`\n", load_line(f, &s.name));
            if !s.doc.is_empty() {
                let _ = writeln!(out, "{}\n", s.doc.trim());
            }
            match &s.kind {
                SymbolKind::Rule { params } => table(&mut out, "attribute", params),
                SymbolKind::Provider { fields } => table(&mut out, "field", fields),
                SymbolKind::Function { params } => table(&mut out, "parameter", params),
            }
        }
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}
