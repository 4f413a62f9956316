//! Cells (`[cells]`, `[repositories]`, `[cell_aliases]`) and build file names (`[buildfile]`).

use std::collections::BTreeMap;

use anyhow::{anyhow, Result};

use super::config::BuckConfig;

#[derive(Clone, Debug)]
pub struct Cells {
    /// Cell name -> project-relative directory (`""` for the project root).
    paths: BTreeMap<String, String>,
    /// Alias -> cell name.
    aliases: BTreeMap<String, String>,
}

impl Cells {
    pub fn from_config(config: &BuckConfig) -> Result<Cells> {
        let mut paths = BTreeMap::new();
        for section in ["repositories", "cells"] {
            for (name, path) in config.section(section) {
                paths.insert(name, normalize_dir(&path));
            }
        }
        if !paths.values().any(|p| p.is_empty()) {
            // buck2 always has the project root as a cell; name it `root` when undeclared.
            paths.entry("root".to_owned()).or_insert_with(String::new);
        }
        let mut aliases = BTreeMap::new();
        for (alias, target) in config.section("cell_aliases") {
            let target = target.trim().to_owned();
            if !paths.contains_key(&target) {
                return Err(anyhow!(
                    "[cell_aliases] `{alias} = {target}`: `{target}` is not a cell in [cells]"
                ));
            }
            aliases.insert(alias, target);
        }
        Ok(Cells { paths, aliases })
    }

    /// The canonical name of a cell or alias.
    pub fn resolve(&self, name: &str) -> Option<&str> {
        if let Some((k, _)) = self.paths.get_key_value(name) {
            return Some(k.as_str());
        }
        self.aliases.get(name).map(|s| s.as_str())
    }

    pub fn resolve_or_err(&self, name: &str) -> Result<String> {
        self.resolve(name).map(str::to_owned).ok_or_else(|| {
            anyhow!(
                "Unknown cell `{name}` (known cells: {})",
                self.paths.keys().cloned().collect::<Vec<_>>().join(", ")
            )
        })
    }

    pub fn path(&self, cell: &str) -> Option<&str> {
        self.resolve(cell)
            .and_then(|c| self.paths.get(c))
            .map(|s| s.as_str())
    }

    /// The cell whose directory is the project root.
    pub fn root_cell(&self) -> &str {
        self.paths
            .iter()
            .find(|(_, p)| p.is_empty())
            .map(|(n, _)| n.as_str())
            .unwrap_or("root")
    }

    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.paths.keys().map(|s| s.as_str())
    }

    /// The cell owning a project-relative path and the path inside that cell (longest match).
    pub fn owner_of(&self, project_path: &str) -> (String, String) {
        let mut best: Option<(&str, &str)> = None;
        for (name, dir) in &self.paths {
            let inside = dir.is_empty()
                || project_path == dir
                || project_path.starts_with(&format!("{dir}/"));
            if inside && best.is_none_or(|(_, d)| dir.len() > d.len()) {
                best = Some((name, dir));
            }
        }
        match best {
            Some((name, dir)) => {
                let rest = project_path[dir.len()..].trim_start_matches('/');
                (name.to_owned(), rest.to_owned())
            }
            None => (self.root_cell().to_owned(), project_path.to_owned()),
        }
    }

    /// Directories of cells nested inside `cell`, relative to `cell`'s directory.
    pub fn nested_cell_dirs(&self, cell: &str) -> Vec<String> {
        let base = self.path(cell).unwrap_or("").to_owned();
        self.paths
            .values()
            .filter(|d| **d != base)
            .filter_map(|d| {
                if base.is_empty() {
                    Some(d.clone())
                } else {
                    d.strip_prefix(&format!("{base}/")).map(str::to_owned)
                }
            })
            .collect()
    }

    /// `cell` + cell-relative path -> project-relative path.
    pub fn project_path(&self, cell: &str, rel: &str) -> Result<String> {
        let dir = self
            .path(cell)
            .ok_or_else(|| anyhow!("Unknown cell `{cell}`"))?;
        Ok(join(dir, rel))
    }
}

pub fn join(a: &str, b: &str) -> String {
    match (a.is_empty(), b.is_empty()) {
        (true, _) => b.to_owned(),
        (_, true) => a.to_owned(),
        _ => format!("{a}/{b}"),
    }
}

fn normalize_dir(p: &str) -> String {
    let p = p.trim();
    let mut parts: Vec<&str> = Vec::new();
    for c in p.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            c => parts.push(c),
        }
    }
    parts.join("/")
}

/// Build file names in lookup order: `[buildfile] name = BUCK` -> `BUCK.v2`, `BUCK`.
pub fn buildfile_names(config: &BuckConfig) -> Vec<String> {
    let section = config.section("buildfile");
    if let Some(v2) = section.get("name_v2") {
        return v2
            .split([',', ' '])
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect();
    }
    match section.get("name") {
        Some(names) => names
            .split([',', ' '])
            .filter(|s| !s.is_empty())
            .flat_map(|n| [format!("{n}.v2"), n.to_owned()])
            .collect(),
        None => vec!["BUCK.v2".to_owned(), "BUCK".to_owned()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn cells(text: &str) -> Cells {
        let mut c = BuckConfig::default();
        c.merge_text(text, Path::new(".buckconfig")).unwrap();
        Cells::from_config(&c).unwrap()
    }

    #[test]
    fn cells_aliases_and_owners() {
        let c = cells(
            "[cells]\n root = .\n extra = third_party/extra\n[repositories]\n old = old\n\
             [cell_aliases]\n config = root\n",
        );
        assert_eq!(c.path("extra"), Some("third_party/extra"));
        assert_eq!(c.path("old"), Some("old"));
        assert_eq!(c.resolve("config"), Some("root"));
        assert_eq!(
            c.owner_of("third_party/extra/x/y.bzl"),
            ("extra".into(), "x/y.bzl".into())
        );
        assert_eq!(
            c.owner_of("third_party/other"),
            ("root".into(), "third_party/other".into())
        );
        assert_eq!(c.nested_cell_dirs("root"), vec!["third_party/extra", "old"]);
    }

    #[test]
    fn buildfile_names_insert_v2() {
        let mut c = BuckConfig::default();
        c.merge_text("[buildfile]\n name = BUCK\n", Path::new("x"))
            .unwrap();
        assert_eq!(buildfile_names(&c), vec!["BUCK.v2", "BUCK"]);
        assert_eq!(
            buildfile_names(&BuckConfig::default()),
            vec!["BUCK.v2", "BUCK"]
        );
    }
}
