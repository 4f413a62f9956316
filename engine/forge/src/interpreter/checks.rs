//! Graph checks buck2 makes while configuring targets, done on unconfigured nodes before
//! analysis: visibility, and toolchain rules used only through `attrs.toolchain_dep()`.

use std::collections::BTreeSet;

use anyhow::{bail, Context, Result};

use super::pattern::{parse_pattern, Pattern};
use super::Loader;
use crate::model::{check_toolchain_edge, DepKind, TargetLabel, TargetNode};

/// Whether `dep`'s `visibility` lets `from` depend on it.
pub fn is_visible(loader: &Loader, dep: &TargetNode, from: &TargetLabel) -> Result<bool> {
    if dep.label.cell == from.cell && dep.label.package == from.package {
        return Ok(true);
    }
    let cells = &loader.workspace().cells;
    for v in &dep.visibility {
        if v == "PUBLIC" {
            return Ok(true);
        }
        let visible = match parse_pattern(v, &dep.label.cell, &dep.label.package, cells)? {
            Pattern::Target(l) => l.target == *from,
            Pattern::Package { cell, package } => cell == from.cell && package == from.package,
            Pattern::Recursive { cell, package } => {
                cell == from.cell
                    && (package.is_empty()
                        || from.package == package
                        || from.package.starts_with(&format!("{package}/")))
            }
        };
        if visible {
            return Ok(true);
        }
    }
    Ok(false)
}

fn check_edge(loader: &Loader, node: &TargetNode, dep: &TargetNode, kind: DepKind) -> Result<()> {
    if !is_visible(loader, dep, &node.label)? {
        bail!(
            "`{}` is not visible to `{}` (its `visibility` is [{}]; add `\"PUBLIC\"` or a pattern \
             matching `{}`)",
            dep.label,
            node.label,
            dep.visibility
                .iter()
                .map(|v| format!("\"{v}\""))
                .collect::<Vec<_>>()
                .join(", "),
            node.label
        );
    }
    check_toolchain_edge(&dep.label, kind, dep.rule.is_toolchain_rule)
        .with_context(|| format!("Error checking the dependencies of `{}`", node.label))
}

/// Checks every dependency edge reachable from `roots`. Deps that fail to load are left for
/// analysis to report (with buck2's `Unknown target` text and the dependency path).
pub fn check_graph(loader: &Loader, roots: &[TargetLabel]) -> Result<()> {
    let mut seen: BTreeSet<TargetLabel> = BTreeSet::new();
    let mut stack: Vec<TargetLabel> = roots.to_vec();
    while let Some(t) = stack.pop() {
        if !seen.insert(t.clone()) {
            continue;
        }
        let Ok(node) = loader.get_target(&t) else {
            continue;
        };
        for (dep, kind) in node.deps() {
            let Ok(dep_node) = loader.get_target(&dep.target) else {
                continue;
            };
            check_edge(loader, &node, &dep_node, kind)?;
            stack.push(dep.target);
        }
    }
    Ok(())
}
