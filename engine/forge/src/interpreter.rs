//! Loading: `.buckconfig`, cells, `load()`, BUCK and .bzl evaluation, `rule()`, `attrs.*`,
//! attribute coercion, target patterns. Produces [`crate::model::Package`]s.

pub mod attrs;
pub mod cells;
pub mod checks;
pub mod coerce;
pub mod config;
pub mod context;
pub mod eval;
pub mod glob;
pub mod globals;
pub mod pattern;
pub mod query;
pub mod rule;
pub mod select;
pub mod target_name;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use anyhow::{anyhow, bail, Context, Result};
use starlark::environment::{FrozenModule, Globals};

use crate::model::{Package, ProvidersLabel, TargetLabel, TargetNode};
use cells::{join, Cells};
use config::{BuckConfig, ConfigOverride};
use pattern::Pattern;

/// The project root, its merged buckconfig (files + `-c` overrides) and its cells.
pub struct Workspace {
    pub root: PathBuf,
    /// The root cell's configuration.
    pub config: BuckConfig,
    pub cells: Cells,
    /// Build file names in lookup order (`BUCK.v2`, `BUCK`).
    pub buildfile_names: Vec<String>,
    /// Cells with a `.buckconfig` of their own; the others read the root's.
    cell_configs: BTreeMap<String, BuckConfig>,
    /// `[project] ignore`: project-relative paths (globs allowed) that hold no packages and no
    /// file `glob()` lists.
    ignore: globset::GlobSet,
}

fn load_config(dir: &Path, overrides: &[ConfigOverride]) -> Result<BuckConfig> {
    let mut c = BuckConfig::default();
    c.merge_file(&dir.join(".buckconfig"), false)?;
    c.merge_file(&dir.join(".buckconfig.local"), false)?;
    for o in overrides {
        c.apply(o);
    }
    Ok(c)
}

/// The project root above `cwd`: the nearest `.buckroot`, else the outermost `.buckconfig`.
pub fn find_root(cwd: &Path) -> Result<PathBuf> {
    let mut outermost = None;
    for dir in cwd.ancestors() {
        if dir.join(".buckroot").exists() {
            return Ok(dir.to_path_buf());
        }
        if dir.join(".buckconfig").is_file() {
            outermost = Some(dir.to_path_buf());
        }
    }
    outermost.ok_or_else(|| {
        anyhow!(
            "Could not find a project root: no `.buckconfig` in `{}` or any parent directory",
            cwd.display()
        )
    })
}

impl Workspace {
    /// Finds the project root above `cwd` (`.buckroot` / outermost `.buckconfig`) and applies
    /// `-c section.key=value` overrides (a malformed override is an error).
    pub fn discover(cwd: &Path, overrides: &[String]) -> Result<Workspace> {
        let overrides = overrides
            .iter()
            .map(|o| ConfigOverride::parse(o))
            .collect::<Result<Vec<_>>>()?;
        let cwd = cwd.canonicalize().unwrap_or_else(|_| cwd.to_path_buf());
        let root = find_root(&cwd)?;
        Workspace::open(&root, &overrides)
    }

    pub fn open(root: &Path, overrides: &[ConfigOverride]) -> Result<Workspace> {
        let config = load_config(root, overrides)?;
        let cells = Cells::from_config(&config)?;
        let mut cell_configs = BTreeMap::new();
        for name in cells.names() {
            let dir = cells.path(name).unwrap_or("");
            if dir.is_empty() {
                continue;
            }
            let d = root.join(dir);
            if d.join(".buckconfig").is_file() {
                cell_configs.insert(
                    name.to_owned(),
                    load_config(&d, overrides)
                        .with_context(|| format!("Config of cell `{name}`"))?,
                );
            }
        }
        let buildfile_names = cells::buildfile_names(&config);
        let mut ignore = globset::GlobSetBuilder::new();
        for pat in config
            .get("project", "ignore")?
            .unwrap_or_default()
            .split(',')
            .map(|p| p.trim().trim_end_matches('/'))
            .filter(|p| !p.is_empty())
        {
            let glob = globset::GlobBuilder::new(pat)
                .literal_separator(true)
                .build()
                .with_context(|| format!("[project] ignore: invalid pattern `{pat}`"))?;
            ignore.add(glob);
        }
        Ok(Workspace {
            root: root.to_path_buf(),
            config,
            cells,
            buildfile_names,
            cell_configs,
            ignore: ignore.build()?,
        })
    }

    /// `read_config(section, key)` on the root cell.
    pub fn config(&self, section: &str, key: &str) -> Option<String> {
        self.config.get(section, key).ok().flatten()
    }

    /// All `key = value` pairs of one section of the root cell's config.
    pub fn config_section(&self, section: &str) -> BTreeMap<String, String> {
        self.config.section(section)
    }

    /// Whether `[project] ignore` excludes this project-relative path (package discovery and
    /// `glob` see none of it).
    pub fn is_ignored(&self, project_path: &str) -> bool {
        self.ignore.is_match(project_path)
    }

    pub fn cell_config(&self, cell: &str) -> &BuckConfig {
        self.cell_configs.get(cell).unwrap_or(&self.config)
    }

    /// Directory of a cell, project-relative (`""` for root).
    pub fn cell_path(&self, cell: &str) -> Result<String> {
        self.cells
            .path(cell)
            .map(str::to_owned)
            .ok_or_else(|| anyhow!("Unknown cell `{cell}`"))
    }
}

/// Evaluates build files on demand and caches the results.
pub struct Loader {
    ws: Arc<Workspace>,
    globals: Globals,
    pub(crate) bzl_cache: Mutex<HashMap<String, FrozenModule>>,
    packages: Mutex<HashMap<(String, String), Arc<Package>>>,
    /// `default_target_platform` of every loaded target that sets it.
    platforms: Mutex<HashMap<TargetLabel, TargetLabel>>,
}

impl crate::model::TargetSource for Loader {
    fn get_target(&self, label: &TargetLabel) -> Result<Arc<TargetNode>> {
        Loader::get_target(self, label)
    }
    fn target_platform(&self, label: &TargetLabel) -> Result<Option<TargetLabel>> {
        Loader::target_platform(self, label)
    }
    fn config(&self, section: &str, key: &str) -> Option<String> {
        self.workspace().config(section, key)
    }
}

impl Loader {
    /// `rule_globals` registers what rule implementations use beyond loading's own globals
    /// (`provider`, `DefaultInfo`, `cmd_args`, ...: `crate::analysis::register_globals`); the
    /// caller passes it so that loading does not depend on analysis.
    pub fn new(
        ws: Arc<Workspace>,
        rule_globals: fn(&mut starlark::environment::GlobalsBuilder),
    ) -> Result<Loader> {
        Ok(Loader {
            ws,
            globals: globals::build_globals(rule_globals),
            bzl_cache: Mutex::new(HashMap::new()),
            packages: Mutex::new(HashMap::new()),
            platforms: Mutex::new(HashMap::new()),
        })
    }

    pub fn workspace(&self) -> &Workspace {
        &self.ws
    }

    /// The globals BUCK and .bzl files see (also used to evaluate rule implementations).
    pub fn globals(&self) -> &Globals {
        &self.globals
    }

    /// The build file name present in a package directory, if any.
    fn buildfile_in(&self, dir: &Path) -> Option<String> {
        self.ws
            .buildfile_names
            .iter()
            .find(|n| dir.join(n).is_file())
            .cloned()
    }

    pub fn load_package(&self, cell: &str, package: &str) -> Result<Arc<Package>> {
        let cell = self.ws.cells.resolve_or_err(cell)?;
        let key = (cell.clone(), package.to_owned());
        if let Some(p) = self.packages.lock().unwrap().get(&key) {
            return Ok(p.clone());
        }
        let dir = self.ws.cells.project_path(&cell, package)?;
        // As buck2: a directory of a nested cell is that cell's package, never the outer's.
        let (owner, rest) = self.ws.cells.owner_of(&dir);
        if owner != cell {
            bail!(
                "Package `{cell}//{package}` does not exist: `{dir}` is in cell `{owner}`; \
                 use `{owner}//{rest}` instead"
            );
        }
        let Some(name) = self.buildfile_in(&self.ws.root.join(&dir)) else {
            bail!(
                "Package `{cell}//{package}` does not exist: no build file ({}) in `{}`",
                self.ws.buildfile_names.join(" or "),
                if dir.is_empty() { "." } else { &dir }
            );
        };
        let evaluated = self.eval_buildfile(&cell, package, &name)?;
        let (buildfile, targets) = (evaluated.buildfile, evaluated.targets);
        {
            let mut platforms = self.platforms.lock().unwrap();
            for (name, platform) in evaluated.platforms {
                let target = TargetLabel {
                    cell: cell.clone(),
                    package: package.to_owned(),
                    name,
                };
                platforms.insert(target, platform);
            }
        }
        let pkg = Arc::new(Package {
            cell: cell.clone(),
            path: package.to_owned(),
            buildfile: PathBuf::from(buildfile),
            targets,
        });
        self.packages.lock().unwrap().insert(key, pkg.clone());
        Ok(pkg)
    }

    pub fn get_target(&self, label: &TargetLabel) -> Result<Arc<TargetNode>> {
        let pkg = self.load_package(&label.cell, &label.package)?;
        pkg.targets.get(&label.name).cloned().ok_or_else(|| {
            let mut names: Vec<&String> = pkg.targets.keys().collect();
            names.sort();
            let list: String = names.iter().map(|n| format!("\n    {n}")).collect();
            anyhow!(
                "Unknown target `{}` from package `{}//{}`.\nAvailable targets:{}",
                label.name,
                label.cell,
                label.package,
                list
            )
        })
    }

    /// The target platform of a target, as buck2 picks it: its `default_target_platform`,
    /// else the first `[parser] target_platform_detector_spec` entry
    /// (`target:cell//pkg/...->cell//pkg:platform`) whose pattern matches; `None` means the
    /// unspecified platform.
    pub fn target_platform(&self, label: &TargetLabel) -> Result<Option<TargetLabel>> {
        self.load_package(&label.cell, &label.package)?;
        if let Some(p) = self.platforms.lock().unwrap().get(label) {
            return Ok(Some(p.clone()));
        }
        let Some(spec) = self
            .ws
            .config
            .get("parser", "target_platform_detector_spec")?
        else {
            return Ok(None);
        };
        let root = self.ws.cells.root_cell().to_owned();
        for entry in spec.split_whitespace() {
            let bad = || {
                anyhow!(
                    "[parser] target_platform_detector_spec: invalid entry `{entry}`, expected \
                     `target:cell//package/...->cell//package:platform`"
                )
            };
            let rest = entry.strip_prefix("target:").ok_or_else(bad)?;
            let (matcher, platform) = rest.split_once("->").ok_or_else(bad)?;
            let matches = match pattern::parse_pattern(matcher, &root, "", &self.ws.cells)? {
                Pattern::Recursive { cell, package } => {
                    cell == label.cell
                        && (package.is_empty()
                            || label.package == package
                            || label.package.starts_with(&format!("{package}/")))
                }
                _ => return Err(bad()),
            };
            if matches {
                let p = pattern::parse_label(platform, &root, "", &self.ws.cells)?;
                return Ok(Some(p.target));
            }
        }
        Ok(None)
    }

    /// Packages (cell-relative paths) at or below `package` in `cell`, sorted.
    pub fn packages_under(&self, cell: &str, package: &str) -> Result<Vec<String>> {
        let cell_dir = self.ws.cells.path(cell).unwrap_or("").to_owned();
        let start = self.ws.root.join(join(&cell_dir, package));
        let nested: Vec<String> = self.ws.cells.nested_cell_dirs(cell);
        let mut out = Vec::new();
        // buck2 matches nothing below a nested cell's root through the outer cell.
        if nested
            .iter()
            .any(|n| package == n || package.starts_with(&format!("{n}/")))
        {
            return Ok(out);
        }
        if !start.is_dir() {
            bail!(
                "Directory `{}` of pattern `{cell}//{package}/...` does not exist",
                start.display()
            );
        }
        let walker = walkdir::WalkDir::new(&start)
            .sort_by_file_name()
            .into_iter();
        let cell_root = self.ws.root.join(&cell_dir);
        for entry in walker.filter_entry(|e| {
            if e.depth() == 0 {
                return true;
            }
            if !e.file_type().is_dir() {
                return false;
            }
            let name = e.file_name().to_string_lossy();
            if name.starts_with('.') || name == "buck-out" {
                return false;
            }
            let rel = e
                .path()
                .strip_prefix(&cell_root)
                .unwrap_or(e.path())
                .to_string_lossy();
            let project = e
                .path()
                .strip_prefix(&self.ws.root)
                .unwrap_or(e.path())
                .to_string_lossy();
            !nested.iter().any(|n| *n == rel) && !self.ws.is_ignored(&project)
        }) {
            let entry = entry?;
            if self.buildfile_in(entry.path()).is_some() {
                let rel = entry
                    .path()
                    .strip_prefix(&cell_root)?
                    .to_string_lossy()
                    .into_owned();
                out.push(rel);
            }
        }
        out.sort();
        Ok(out)
    }

    /// Expands `//pkg:name`, `//pkg:`, `//pkg/...`, `cell//...`, `:name`, `x[sub]`
    /// relative to `cwd_package` (the project-relative directory the user stands in).
    pub fn resolve_patterns(
        &self,
        patterns: &[String],
        cwd_package: &str,
    ) -> Result<Vec<ProvidersLabel>> {
        let (cwd_cell, cwd_pkg) = self.ws.cells.owner_of(cwd_package);
        let mut out: Vec<ProvidersLabel> = Vec::new();
        let mut seen: std::collections::HashSet<ProvidersLabel> = std::collections::HashSet::new();
        let mut push = |l: ProvidersLabel, out: &mut Vec<ProvidersLabel>| {
            if seen.insert(l.clone()) {
                out.push(l);
            }
        };
        for p in patterns {
            let (cell, packages) =
                match pattern::parse_pattern(p, &cwd_cell, &cwd_pkg, &self.ws.cells)? {
                    Pattern::Target(l) => {
                        self.get_target(&l.target)?;
                        push(l, &mut out);
                        continue;
                    }
                    Pattern::Package { cell, package } => (cell, vec![package]),
                    Pattern::Recursive { cell, package } => {
                        let packages = self.packages_under(&cell, &package)?;
                        (cell, packages)
                    }
                };
            for package in packages {
                let pkg = self.load_package(&cell, &package)?;
                for name in pkg.targets.keys() {
                    let target = TargetLabel {
                        cell: cell.clone(),
                        package: package.clone(),
                        name: name.clone(),
                    };
                    push(
                        ProvidersLabel {
                            target,
                            sub_target: vec![],
                        },
                        &mut out,
                    );
                }
            }
        }
        Ok(out)
    }
}
