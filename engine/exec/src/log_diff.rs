//! `forge log diff A B`: two builds' logs compared action by action, like Bazel's execution
//! log comparison. A and B are checkouts (or their `last-build.json`); every action both
//! built is matched by identity (`owner|category|identifier`, the same across checkouts) and
//! its output digests are compared. The report names the first action whose outputs differ
//! (in dependency order, so the cause, not what it fed), what differs in its inputs or
//! command if anything, and a diff of the first differing file.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};

use crate::build_log::{explain, ActionRecord, BuildLog};
use crate::file_diff;

/// One build: its checkout (where the logged output paths are) and its log.
pub struct Side {
    pub root: PathBuf,
    pub log: BuildLog,
}

const LOG_IN_ROOT: &str = "buck-out/forge/log/last-build.json";

impl Side {
    /// `arg` is a checkout (its last build) or a `last-build.json` inside one.
    pub fn open(arg: &Path) -> Result<Side> {
        let (root, log_path) = if arg.is_dir() {
            (arg.to_path_buf(), arg.join(LOG_IN_ROOT))
        } else {
            // <root>/buck-out/forge/log/<file>
            let root = arg
                .ancestors()
                .nth(4)
                .filter(|r| arg.starts_with(r.join("buck-out")))
                .ok_or_else(|| {
                    anyhow!(
                        "`{}`: expected a checkout or its `{LOG_IN_ROOT}` (the logged output paths are read relative to the checkout)",
                        arg.display()
                    )
                })?
                .to_path_buf();
            (root, arg.to_path_buf())
        };
        let bytes = fs::read(&log_path).with_context(|| {
            format!(
                "`{}`: no build log there; run `forge build` in that checkout first",
                log_path.display()
            )
        })?;
        let log: BuildLog = serde_json::from_slice(&bytes)
            .with_context(|| format!("reading the build log `{}`", log_path.display()))?;
        Ok(Side { root, log })
    }
}

/// The comparison of two builds.
pub struct LogDiff<'a> {
    pub a: &'a Side,
    pub b: &'a Side,
    pub same: usize,
    /// Actions of both builds whose outputs differ, in log (identity) order.
    pub differ: Vec<(&'a ActionRecord, &'a ActionRecord)>,
    pub only_a: Vec<&'a ActionRecord>,
    pub only_b: Vec<&'a ActionRecord>,
}

impl LogDiff<'_> {
    pub fn identical(&self) -> bool {
        self.differ.is_empty() && self.only_a.is_empty() && self.only_b.is_empty()
    }
}

pub fn compare<'a>(a: &'a Side, b: &'a Side) -> LogDiff<'a> {
    let by_id = |s: &'a Side| -> BTreeMap<&'a str, &'a ActionRecord> {
        s.log
            .actions
            .iter()
            .map(|r| (r.identity.as_str(), r))
            .collect()
    };
    let (ma, mb) = (by_id(a), by_id(b));
    let mut d = LogDiff {
        a,
        b,
        same: 0,
        differ: Vec::new(),
        only_a: Vec::new(),
        only_b: Vec::new(),
    };
    for (id, ra) in &ma {
        match mb.get(id) {
            None => d.only_a.push(ra),
            Some(rb) if ra.output_digests == rb.output_digests => d.same += 1,
            Some(rb) => d.differ.push((ra, rb)),
        }
    }
    d.only_b = mb
        .iter()
        .filter(|(id, _)| !ma.contains_key(*id))
        .map(|(_, r)| *r)
        .collect();
    d
}

/// True when `input` is (inside) one of `producer`'s outputs.
fn reads_output_of(consumer: &ActionRecord, producer: &ActionRecord) -> bool {
    consumer.inputs.iter().any(|(p, _)| {
        producer
            .outputs
            .iter()
            .any(|o| p == o || p.starts_with(&format!("{o}/")))
    })
}

/// The differing action none of whose inputs comes from another differing action: where
/// the builds first part.
pub fn first_difference<'a>(d: &LogDiff<'a>) -> Option<(&'a ActionRecord, &'a ActionRecord)> {
    d.differ
        .iter()
        .find(|(_, b)| {
            !d.differ
                .iter()
                .any(|(_, up)| up.identity != b.identity && reads_output_of(b, up))
        })
        .or(d.differ.first())
        .copied()
}

/// The first output path whose digest differs (or which only one build produced).
fn first_differing_output(a: &ActionRecord, b: &ActionRecord) -> Option<(String, String, String)> {
    let ma: BTreeMap<&str, &str> = a
        .output_digests
        .iter()
        .map(|(p, h)| (p.as_str(), h.as_str()))
        .collect();
    let mb: BTreeMap<&str, &str> = b
        .output_digests
        .iter()
        .map(|(p, h)| (p.as_str(), h.as_str()))
        .collect();
    let mut paths: Vec<&str> = ma.keys().chain(mb.keys()).copied().collect();
    paths.sort();
    paths.dedup();
    paths.into_iter().find_map(|p| {
        let (ha, hb) = (ma.get(p).copied(), mb.get(p).copied());
        (ha != hb).then(|| {
            (
                p.to_string(),
                ha.unwrap_or("<absent>").to_string(),
                hb.unwrap_or("<absent>").to_string(),
            )
        })
    })
}

/// The file's bytes if they still have the logged digest (a later build may have replaced it).
fn logged_bytes(root: &Path, rel: &str, digest: &str) -> Result<Vec<u8>, String> {
    let path = root.join(rel);
    let bytes = fs::read(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let hash = crate::digest::hash_bytes(&bytes);
    if digest.split(' ').next() != Some(hash.as_str()) {
        return Err(format!(
            "{}: no longer the file that build wrote (sha256 {}, logged {}); build it again there to see the difference",
            path.display(),
            short(&hash),
            short(digest)
        ));
    }
    Ok(bytes)
}

fn short(h: &str) -> &str {
    &h[..12.min(h.len())]
}

/// The text of `forge log diff`.
pub fn render(d: &LogDiff) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "build {} in {} vs build {} in {}: {} action(s) in both, {} with identical outputs, {} differ; {} only in the first, {} only in the second",
        d.a.log.build_id,
        d.a.root.display(),
        d.b.log.build_id,
        d.b.root.display(),
        d.same + d.differ.len(),
        d.same,
        d.differ.len(),
        d.only_a.len(),
        d.only_b.len()
    );
    for (which, list) in [("first", &d.only_a), ("second", &d.only_b)] {
        for r in list.iter() {
            let _ = writeln!(out, "only in the {which} build: {}", r.name);
        }
    }
    let Some((ra, rb)) = first_difference(d) else {
        if d.identical() {
            out.push_str("every action's outputs are byte-identical\n");
        }
        return out;
    };
    let _ = writeln!(out, "first action whose outputs differ: {}", rb.name);
    let changes = explain(Some(ra), rb);
    if ra.key == rb.key
        || changes
            .iter()
            .all(|c| c.starts_with("inputs and command unchanged"))
    {
        out.push_str(
            "  its inputs, command and environment are identical in both builds: the action itself is not reproducible\n",
        );
    } else {
        for c in changes {
            let _ = writeln!(out, "  {c}");
        }
    }
    if let Some((path, ha, hb)) = first_differing_output(ra, rb) {
        let _ = writeln!(out, "  output {path}: {} vs {}", short(&ha), short(&hb));
        match (
            logged_bytes(&d.a.root, &path, &ha),
            logged_bytes(&d.b.root, &path, &hb),
        ) {
            (Ok(x), Ok(y)) => out.push_str(&file_diff::render(&path, &x, &y)),
            (Err(e), _) | (_, Err(e)) => {
                let _ = writeln!(out, "  (no diff: {e})");
            }
        }
    }
    // Each with why: an action with the same key as in the other build is a cause of its
    // own; one whose key differs read something that differed.
    let rest: Vec<String> = d
        .differ
        .iter()
        .filter(|(_, b)| b.identity != rb.identity)
        .map(|(a, b)| {
            let why = if a.key == b.key {
                "same inputs and command: not reproducible itself"
            } else {
                "its inputs or command differ"
            };
            format!("{} ({why})", b.name)
        })
        .collect();
    if !rest.is_empty() {
        let _ = writeln!(out, "{} more action(s) differ:", rest.len());
        for n in rest {
            let _ = writeln!(out, "  {n}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(id: &str, inputs: &[&str], outputs: &[(&str, &str)]) -> ActionRecord {
        ActionRecord {
            name: format!("{id} (cat)"),
            identity: format!("{id}|cat|"),
            key: format!("key-{id}"),
            executor: "local".into(),
            duration_ms: 0,
            inputs: inputs.iter().map(|p| (p.to_string(), "h".into())).collect(),
            argv: vec!["tool".into()],
            env: Vec::new(),
            outputs: outputs
                .iter()
                .map(|(p, _)| p.split('/').take(2).collect::<Vec<_>>().join("/"))
                .collect(),
            output_digests: outputs
                .iter()
                .map(|(p, h)| (p.to_string(), h.to_string()))
                .collect(),
            tool: None,
            changes: Vec::new(),
            remote_key: None,
            not_shared: None,
        }
    }

    fn side(root: &Path, actions: Vec<ActionRecord>) -> Side {
        Side {
            root: root.to_path_buf(),
            log: BuildLog {
                build_id: "b".into(),
                started_unix_ms: 0,
                duration_ms: 0,
                success: true,
                sandbox: "bubblewrap".into(),
                actions,
            },
        }
    }

    fn write(root: &Path, rel: &str, text: &str) -> String {
        let p = root.join(rel);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(&p, text).unwrap();
        crate::digest::hash_bytes(text.as_bytes())
    }

    /// Two workspaces, one action producing different bytes: the report names that action
    /// and not the one it feeds, and shows the changed line.
    #[test]
    fn names_the_first_differing_action_with_a_line_diff() {
        let (ta, tb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let ha = write(ta.path(), "out/split/p.json", "a\nb\nsame\n");
        let hb = write(tb.path(), "out/split/p.json", "a\nc\nsame\n");
        let build = |h: &str| {
            vec![
                // the consumer sorts first: the order must come from the inputs
                rec("a_export", &["out/split/p.json"], &[("out/export", "e1")]),
                rec("b_split", &["src"], &[("out/split/p.json", h)]),
                rec("c_other", &["src"], &[("out/other", "o")]),
            ]
        };
        let (sa, sb) = (side(ta.path(), build(&ha)), side(tb.path(), build(&hb)));
        let mut sb2 = sb;
        sb2.log.actions[0].output_digests[0].1 = "e2".into();
        let d = compare(&sa, &sb2);
        assert_eq!((d.same, d.differ.len()), (1, 2));
        let text = render(&d);
        assert!(
            text.contains("first action whose outputs differ: b_split (cat)"),
            "{text}"
        );
        assert!(
            text.contains("the action itself is not reproducible"),
            "{text}"
        );
        assert!(text.contains("-b\n+c\n"), "{text}");
        assert!(
            text.contains("1 more action(s) differ:\n  a_export (cat)"),
            "{text}"
        );
    }

    #[test]
    fn identical_builds_say_so() {
        let t = tempfile::tempdir().unwrap();
        let b = || vec![rec("x", &[], &[("out/x", "h")])];
        let (sa, sb) = (side(t.path(), b()), side(t.path(), b()));
        let d = compare(&sa, &sb);
        assert!(d.identical());
        assert!(render(&d).contains("byte-identical"));
    }

    #[test]
    fn a_missing_action_is_a_difference() {
        let t = tempfile::tempdir().unwrap();
        let sa = side(t.path(), vec![rec("x", &[], &[("out/x", "h")])]);
        let sb = side(t.path(), Vec::new());
        let d = compare(&sa, &sb);
        assert!(!d.identical());
        assert!(render(&d).contains("only in the first build: x (cat)"));
    }

    #[test]
    fn a_replaced_file_is_reported_not_diffed() {
        let (ta, tb) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        write(ta.path(), "out/f", "now\n");
        write(tb.path(), "out/f", "other\n");
        let sa = side(ta.path(), vec![rec("x", &[], &[("out/f", "logged-a")])]);
        let sb = side(tb.path(), vec![rec("x", &[], &[("out/f", "logged-b")])]);
        let text = render(&compare(&sa, &sb));
        assert!(
            text.contains("no longer the file that build wrote"),
            "{text}"
        );
    }

    #[test]
    fn changed_inputs_are_named() {
        let t = tempfile::tempdir().unwrap();
        let sa = side(t.path(), vec![rec("x", &["in"], &[("out/f", "1")])]);
        let mut sb = side(t.path(), vec![rec("x", &["in"], &[("out/f", "2")])]);
        sb.log.actions[0].inputs[0].1 = "other".into();
        sb.log.actions[0].key = "k2".into();
        let text = render(&compare(&sa, &sb));
        assert!(text.contains("input changed: in"), "{text}");
    }
}
