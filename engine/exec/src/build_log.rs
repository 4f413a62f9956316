//! The build log: `buck-out/forge/log/last-build.json` (every action of the last build with
//! its executor, key, duration and input digests) and `action-history.json` (the latest
//! record of each action, keyed by `owner|category|identifier`), from which `what-ran`
//! explains why an action ran.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::Path;

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use crate::action_cache::{Node, OutputRecord};
use crate::action_key::ToolIdentity;
use crate::layout::{write_atomic, Layout};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ActionRecord {
    pub name: String,
    /// `owner|category|identifier`: stable across builds while the rule is unchanged.
    pub identity: String,
    pub key: String,
    /// `local`, `cache`, `remote`, `in-process`, `up-to-date` or `failed`.
    pub executor: String,
    pub duration_ms: u64,
    /// (path, digest) of every input.
    pub inputs: Vec<(String, String)>,
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    pub outputs: Vec<String>,
    /// (path, digest) of every file the action produced, a directory's files one by one
    /// (`symlink:<target>` for a symlink, `dir` for a directory): what `forge log diff`
    /// compares between two builds. Empty for a failed action.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_digests: Vec<(String, String)>,
    pub tool: Option<ToolIdentity>,
    /// Why it ran, compared with the previous record (filled for local runs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<String>,
    /// Its key in the remote cache (REAPI Action digest `hash/size`), when one is configured:
    /// the same action keeps it across builds of the same sources, on any machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote_key: Option<String>,
    /// Ran locally with a remote cache to write to, and not uploaded: why (its rule's
    /// `allow_cache_upload`, the platform, the size cap, an error).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_shared: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BuildLog {
    pub build_id: String,
    pub started_unix_ms: u128,
    pub duration_ms: u64,
    pub success: bool,
    pub sandbox: String,
    pub actions: Vec<ActionRecord>,
}

fn history_path(layout: &Layout) -> std::path::PathBuf {
    layout.log_dir().join("action-history.json")
}

fn last_build_path(root: &Path) -> std::path::PathBuf {
    Layout::new(root).log_dir().join("last-build.json")
}

/// Every file of `outputs` with its digest, in path order: the flat form `forge log diff`
/// compares (a directory's entries are listed one by one, so a difference names the file).
pub fn flatten_outputs(outputs: &[OutputRecord]) -> Vec<(String, String)> {
    fn digest(node: &Node) -> String {
        match node {
            Node::File {
                hash, executable, ..
            } => {
                if *executable {
                    format!("{hash} +x")
                } else {
                    hash.clone()
                }
            }
            Node::Symlink { target } => format!("symlink:{target}"),
            Node::Dir { .. } => "dir".to_string(),
        }
    }
    let mut out = Vec::new();
    for o in outputs {
        out.push((o.path.clone(), digest(&o.node)));
        if let Node::Dir { entries } = &o.node {
            for (rel, node) in entries {
                out.push((format!("{}/{rel}", o.path), digest(node)));
            }
        }
    }
    out.sort();
    out
}

/// Why `now` ran, compared with `before` (the previous record of the same action).
pub fn explain(before: Option<&ActionRecord>, now: &ActionRecord) -> Vec<String> {
    let Some(before) = before else {
        return vec!["no previous record of this action (first build, or the target/category/identifier changed)".into()];
    };
    let mut out = Vec::new();
    let old: HashMap<&str, &str> = before
        .inputs
        .iter()
        .map(|(p, d)| (p.as_str(), d.as_str()))
        .collect();
    let new: HashMap<&str, &str> = now
        .inputs
        .iter()
        .map(|(p, d)| (p.as_str(), d.as_str()))
        .collect();
    for (p, d) in &now.inputs {
        match old.get(p.as_str()) {
            None => out.push(format!("input added: {p}")),
            Some(o) if *o != d => out.push(format!(
                "input changed: {p} (sha256 {} -> {})",
                &o[..12.min(o.len())],
                &d[..12.min(d.len())]
            )),
            _ => {}
        }
    }
    for (p, _) in &before.inputs {
        if !new.contains_key(p.as_str()) {
            out.push(format!("input removed: {p}"));
        }
    }
    if before.argv != now.argv {
        let i = before
            .argv
            .iter()
            .zip(&now.argv)
            .take_while(|(a, b)| a == b)
            .count();
        out.push(format!(
            "command changed at argument {i}: {:?} -> {:?}",
            before.argv.get(i).map(String::as_str).unwrap_or("<none>"),
            now.argv.get(i).map(String::as_str).unwrap_or("<none>")
        ));
    }
    let old_env: BTreeMap<&String, &String> = before.env.iter().map(|(k, v)| (k, v)).collect();
    let new_env: BTreeMap<&String, &String> = now.env.iter().map(|(k, v)| (k, v)).collect();
    for k in old_env
        .keys()
        .chain(new_env.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        if old_env.get(k) != new_env.get(k) {
            out.push(format!("env changed: {k}"));
        }
    }
    if before.tool != now.tool {
        let name = now
            .tool
            .as_ref()
            .or(before.tool.as_ref())
            .map(|t| t.path.as_str())
            .unwrap_or("?");
        out.push(format!("tool changed: {name}"));
    }
    if before.outputs != now.outputs {
        out.push("declared outputs changed".into());
    }
    if out.is_empty() {
        out.push(if before.key == now.key {
            "inputs and command unchanged: its outputs were missing or modified and no cache entry could restore them".into()
        } else {
            "the action's definition changed".into()
        });
    }
    out
}

/// Explains the local runs against the history, then writes the log and the history.
pub fn write(layout: &Layout, mut log: BuildLog) -> Result<()> {
    let hist_path = history_path(layout);
    let mut history: HashMap<String, ActionRecord> = fs::read(&hist_path)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default();
    let mut history_changed = false;
    for rec in &mut log.actions {
        if rec.executor == "local" || rec.executor == "failed" {
            rec.changes = explain(history.get(&rec.identity), rec);
        }
        if history.get(&rec.identity).map(|h| &h.key) != Some(&rec.key) {
            let mut stored = rec.clone();
            stored.changes.clear();
            history.insert(rec.identity.clone(), stored);
            history_changed = true;
        }
    }
    if history_changed {
        write_atomic(&hist_path, &serde_json::to_vec(&history)?)
            .with_context(|| format!("writing `{}`", hist_path.display()))?;
    }
    let path = layout.log_dir().join("last-build.json");
    write_atomic(&path, &serde_json::to_vec_pretty(&log)?)
        .with_context(|| format!("writing `{}`", path.display()))
}

pub fn read_last(root: &Path) -> Result<BuildLog> {
    let path = last_build_path(root);
    let bytes = fs::read(&path).with_context(|| {
        format!(
            "no build recorded in this workspace yet (`{}` is missing); run `forge build` first",
            path.display()
        )
    })?;
    serde_json::from_slice(&bytes).with_context(|| format!("reading `{}`", path.display()))
}

/// The text of `forge log what-ran`.
pub fn render_what_ran(log: &BuildLog) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for a in &log.actions {
        *counts.entry(a.executor.as_str()).or_default() += 1;
    }
    let summary: Vec<String> = [
        "local",
        "cache",
        "remote",
        "in-process",
        "up-to-date",
        "failed",
    ]
    .iter()
    .map(|e| format!("{e} {}", counts.get(e).copied().unwrap_or(0)))
    .collect();
    let mut out = format!(
        "build {} ({}, {} sandbox): {} actions: {}\n",
        log.build_id,
        if log.success { "succeeded" } else { "failed" },
        log.sandbox,
        log.actions.len(),
        summary.join(", ")
    );
    for a in &log.actions {
        if a.executor == "up-to-date" {
            continue;
        }
        out.push_str(&format!(
            "{:<10} {:>7.2}s  {}\n",
            a.executor,
            a.duration_ms as f64 / 1000.0,
            a.name
        ));
        for c in &a.changes {
            out.push_str(&format!("{:>21}{c}\n", ""));
        }
        if let Some(why) = &a.not_shared {
            out.push_str(&format!(
                "{:>21}not shared through the remote cache: {why}\n",
                ""
            ));
        }
    }
    out
}
