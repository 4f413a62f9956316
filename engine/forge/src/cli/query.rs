//! `forge targets` and `forge uquery`.

use std::io::Write;

use anyhow::Result;

use super::{OutputFormat, Session};
use crate::interpreter::query::QueryEnv;

pub(super) fn targets(s: &Session, patterns: &[String]) -> Result<i32> {
    let mut labels = s.loader.resolve_patterns(patterns, &s.cwd_package)?;
    // buck2 prints targets sorted by package, then name (not in declaration order).
    labels.sort_by(|a, b| {
        let key = |l: &crate::model::ProvidersLabel| {
            (
                l.target.cell.clone(),
                l.target.package.clone(),
                l.target.name.clone(),
            )
        };
        key(a).cmp(&key(b))
    });
    let mut out = std::io::stdout().lock();
    for l in labels {
        // A closed pipe (`| head`) is not an error of ours.
        if writeln!(out, "{l}").is_err() {
            break;
        }
    }
    Ok(0)
}

fn dot_quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

pub(super) fn uquery(s: &Session, query: &str, format: OutputFormat) -> Result<i32> {
    let env = QueryEnv {
        loader: &s.loader,
        cwd_package: &s.cwd_package,
    };
    let result = env.run(query)?;
    let mut lines: Vec<String> = Vec::new();
    match format {
        OutputFormat::List => lines.extend(result.iter().map(|t| t.to_string())),
        OutputFormat::Json => {
            let names: Vec<String> = result.iter().map(|t| t.to_string()).collect();
            lines.push(serde_json::to_string_pretty(&names)?);
        }
        OutputFormat::Dot => {
            lines.push("digraph result_graph {".to_owned());
            for t in &result {
                lines.push(format!("  {};", dot_quote(&t.to_string())));
            }
            for (a, b) in env.edges(&result)? {
                let (a, b) = (dot_quote(&a.to_string()), dot_quote(&b.to_string()));
                lines.push(format!("  {a} -> {b};"));
            }
            lines.push("}".to_owned());
        }
    }
    let mut out = std::io::stdout().lock();
    for l in lines {
        // A closed pipe (`| head`) is not an error of ours.
        if writeln!(out, "{l}").is_err() {
            break;
        }
    }
    Ok(0)
}
