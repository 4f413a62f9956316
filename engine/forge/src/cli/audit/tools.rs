//! `forge audit tools PATTERNS` (forge only): every command an action runs comes from the
//! graph. An action's program (`argv[0]`, or the command after `env [VAR=value]...`) must be
//!
//! - a project path (a source or a build output: its content is in the action key), or
//! - a command named by one of the owning target's toolchains (`attrs.toolchain_dep`): the
//!   toolchain is what records that tool's version among the action's inputs, or
//! - the execution platform's shell (`sh`, `bash`), which runs scripts.
//!
//! Anything else, `python3` or `/usr/bin/vivado` straight from PATH, is reported with the
//! target, the action and what its toolchains do name; the command exits 3. The check reads
//! the analysed action graph only: nothing is built.

use std::collections::{BTreeMap, BTreeSet};

use anyhow::Result;

use crate::analysis::providers::ProviderCollection;
use crate::analysis::Analyzer;
use crate::cli::{build, Session, EXIT_USER_ERROR};
use crate::model::{ActionKind, DepKind, ProvidersLabel, TargetLabel};

/// The execution platform's shells: every action may run a script with them.
pub const PLATFORM_SHELLS: &[&str] = &["sh", "bash", "/bin/sh", "/bin/bash", "/usr/bin/bash"];

/// The program an argv runs: `argv[0]`, or for `env [-opts] [VAR=value]... cmd` the `cmd`.
pub fn program(argv: &[String]) -> Option<&str> {
    let first = argv.first()?;
    if first != "env" && first != "/usr/bin/env" && first != "/bin/env" {
        return Some(first);
    }
    argv[1..]
        .iter()
        .map(String::as_str)
        .find(|a| !a.starts_with('-') && !a.contains('='))
        .or(Some(first))
}

/// Every string literal in a Starlark repr (providers render their string fields quoted).
pub fn quoted_strings(repr: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut chars = repr.chars();
    while let Some(c) = chars.next() {
        if c != '"' {
            continue;
        }
        let mut s = String::new();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    if let Some(n) = chars.next() {
                        s.push(n);
                    }
                }
                '"' => break,
                c => s.push(c),
            }
        }
        out.insert(s);
    }
    out
}

/// Whether `program` may run in an action whose toolchains name `named`.
pub fn allowed(program: &str, project_root: &str, named: &BTreeSet<String>) -> bool {
    if PLATFORM_SHELLS.contains(&program) || named.contains(program) {
        return true;
    }
    if let Some(rest) = program.strip_prefix(project_root) {
        return rest.starts_with('/');
    }
    // A relative path with a directory part is a project path (cwd = project root).
    !program.starts_with('/') && program.contains('/')
}

struct Names<'a> {
    s: &'a Session,
    analyzer: &'a Analyzer,
    cache: BTreeMap<TargetLabel, (Vec<String>, BTreeSet<String>)>,
}

impl Names<'_> {
    /// The toolchains of `owner` (itself too when it is one) and every string they provide.
    fn of(&mut self, owner: &TargetLabel) -> Result<&(Vec<String>, BTreeSet<String>)> {
        if !self.cache.contains_key(owner) {
            let node = self.s.loader.get_target(owner)?;
            let mut toolchains: Vec<ProvidersLabel> = node
                .deps()
                .into_iter()
                .filter(|(_, k)| *k == DepKind::Toolchain)
                .map(|(l, _)| l)
                .collect();
            if node.rule.is_toolchain_rule {
                toolchains.push(ProvidersLabel {
                    target: owner.clone(),
                    sub_target: Vec::new(),
                });
            }
            let mut names = BTreeSet::new();
            for t in &toolchains {
                let providers = self.analyzer.providers(t)?;
                let Some(collection) = ProviderCollection::from_value(providers.value()) else {
                    continue;
                };
                // Each provider renders its fields, so string fields appear quoted.
                for p in &collection.providers {
                    names.extend(quoted_strings(&p.to_repr()));
                }
            }
            let labels = toolchains.iter().map(|t| t.to_string()).collect();
            self.cache.insert(owner.clone(), (labels, names));
        }
        Ok(&self.cache[owner])
    }
}

pub(crate) fn tools(s: &Session, patterns: &[String]) -> Result<i32> {
    let (analyzer, _) = build::analyse(s, patterns)?;
    let graph = analyzer.action_graph();
    let root = s.root().to_string_lossy().into_owned();
    let mut names = Names {
        s,
        analyzer: &analyzer,
        cache: BTreeMap::new(),
    };
    let mut checked = 0;
    let mut bad = Vec::new();
    for action in &graph.actions {
        let ActionKind::Run { argv, .. } = &action.kind else {
            continue;
        };
        let Some(program) = program(argv) else {
            continue;
        };
        checked += 1;
        let (toolchains, named) = names.of(&action.owner)?;
        if allowed(program, &root, named) {
            continue;
        }
        let whose = if toolchains.is_empty() {
            "the target has no toolchain_dep".to_string()
        } else {
            format!(
                "no toolchain of the target ({}) names it",
                toolchains.join(", ")
            )
        };
        bad.push(format!(
            "{}: runs `{program}` from PATH, but {whose}. Take the command from a toolchain \
             provider (and put its version among the action's inputs), or run a project file.",
            action.display_name()
        ));
    }
    for line in &bad {
        eprintln!("{line}");
    }
    if bad.is_empty() {
        eprintln!(
            "{checked} commands checked: each is a project file, a shell, or named by its \
             target's toolchains"
        );
        Ok(0)
    } else {
        eprintln!(
            "{} of {checked} commands run a tool no toolchain names",
            bad.len()
        );
        Ok(EXIT_USER_ERROR)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn the_program_is_found_behind_env() {
        assert_eq!(program(&v(&["python3", "x.py"])), Some("python3"));
        assert_eq!(
            program(&v(&["env", "-i", "A=1", "python3"])),
            Some("python3")
        );
        assert_eq!(
            program(&v(&["/usr/bin/env", "vivado", "-mode"])),
            Some("vivado")
        );
        assert_eq!(program(&v(&["env", "A=1"])), Some("env"));
        assert_eq!(program(&[]), None);
    }

    #[test]
    fn strings_of_a_repr() {
        let r = r#"[SystemToolInfo(tool="iverilog", version=<build x>), X(a=["a\"b", "c"])]"#;
        assert_eq!(
            quoted_strings(r),
            ["iverilog", "a\"b", "c"]
                .iter()
                .map(|s| s.to_string())
                .collect()
        );
    }

    #[test]
    fn what_may_run() {
        let named: BTreeSet<String> = ["iverilog".to_string()].into();
        for ok in [
            "iverilog",
            "bash",
            "rules/tools/x.sh",
            "buck-out/forge/art/t",
            "/p/r/x",
        ] {
            assert!(allowed(ok, "/p/r", &named), "{ok}");
        }
        for bad in ["python3", "/usr/bin/vivado", "/p/rx/tool", "yosys"] {
            assert!(!allowed(bad, "/p/r", &named), "{bad}");
        }
    }
}
