//! `forge audit providers`: load and analyse targets, print what they provide, run no
//! action. It is the analysis-only mode buck2 has under the same name, so the time of
//! loading plus analysis can be measured on its own (bench/deploy_scale/).

use std::io::Write;

use anyhow::Result;

use crate::analysis::providers::ProviderCollection;
use crate::analysis::Analyzer;
use crate::cli::Session;

pub(crate) fn providers(s: &Session, patterns: &[String], quiet: bool, list: bool) -> Result<i32> {
    let labels = s.loader.resolve_patterns(patterns, &s.cwd_package)?;
    let roots: Vec<_> = labels.iter().map(|l| l.target.clone()).collect();
    crate::interpreter::checks::check_graph(&s.loader, &roots)?;
    let analyzer = Analyzer::with_source(s.loader.clone(), s.root().to_string_lossy().into_owned());
    let mut out = std::io::stdout().lock();
    for l in &labels {
        let cfg = analyzer.analyse(&l.target)?.label.cfg.clone();
        let value = analyzer.providers(l)?;
        // buck2's layout: the label alone (`--quiet`), or `label:` then `  - Name` lines
        // (`--list`); the values themselves are printed one provider per line.
        let coll = ProviderCollection::from_value(value.value())
            .expect("analysis results are provider collections");
        let mut text = format!("{l} ({cfg})");
        if quiet {
            text.push('\n');
        } else if list {
            text.push_str(":\n");
            for name in coll.names() {
                text.push_str(&format!("  - {name}\n"));
            }
        } else {
            text.push_str(":\n");
            for p in &coll.providers {
                text.push_str(&format!("    {}\n", p.to_repr()));
            }
        }
        // A closed pipe (`| head`) is not an error of ours.
        if out.write_all(text.as_bytes()).is_err() {
            break;
        }
    }
    Ok(0)
}
