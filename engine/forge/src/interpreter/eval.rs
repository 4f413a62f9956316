//! Evaluation of .bzl modules and build files: dialects, `load()` resolution, the prelude.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use anyhow::{anyhow, bail, Context, Result};
use starlark::environment::{FrozenModule, Module};
use starlark::eval::{Evaluator, FileLoader};
use starlark::syntax::{AstModule, Dialect, DialectTypes};
use starlark::values::structs::StructRef;

use super::cells::join;
use super::context::{BuildContext, PackageState};
use super::rule::FrozenRuleCallable;
use super::Loader;
use crate::model::TargetNode;

/// What evaluating one build file yields.
pub struct EvaluatedBuildFile {
    /// Project-relative path of the build file.
    pub buildfile: String,
    pub targets: indexmap::IndexMap<String, Arc<TargetNode>>,
    pub platforms: HashMap<String, crate::model::TargetLabel>,
}

/// A `.bzl` as `cell//path/to/file.bzl`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ImportPath {
    pub cell: String,
    pub path: String,
}

impl std::fmt::Display for ImportPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}//{}", self.cell, self.path)
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    Buck,
    Bzl,
}

pub fn dialect(kind: FileKind) -> Dialect {
    match kind {
        FileKind::Buck => Dialect {
            enable_def: false,
            enable_lambda: true,
            enable_load: true,
            enable_keyword_only_arguments: false,
            enable_types: DialectTypes::Disable,
            enable_load_reexport: false,
            enable_top_level_stmt: false,
            enable_f_strings: true,
            ..Dialect::Standard
        },
        FileKind::Bzl => Dialect {
            enable_def: true,
            enable_lambda: true,
            enable_load: true,
            enable_keyword_only_arguments: true,
            enable_types: DialectTypes::Enable,
            enable_load_reexport: false,
            enable_top_level_stmt: true,
            enable_f_strings: true,
            ..Dialect::Standard
        },
    }
}

/// Resolves the string of a `load()` made by `cell//dir/...` with buck2's rules.
pub fn resolve_load(
    s: &str,
    from_cell: &str,
    from_dir: &str,
    loader: &Loader,
) -> Result<ImportPath> {
    let cells = &loader.workspace().cells;
    let (cell, rest) = if let Some(r) = s.strip_prefix('@') {
        let (c, rest) = r.split_once("//").ok_or_else(|| {
            anyhow!("Invalid load path `{s}`: expected `@cell//package:file.bzl`")
        })?;
        (cells.resolve_or_err(c)?, rest.to_owned())
    } else if let Some(r) = s.strip_prefix("//") {
        (from_cell.to_owned(), r.to_owned())
    } else if let Some(r) = s.strip_prefix(':') {
        (from_cell.to_owned(), format!("{from_dir}:{r}"))
    } else if s.contains("//") {
        bail!("Invalid load path `{s}`: a cell in `load()` must be written with `@` (`@{s}`)");
    } else {
        bail!("Invalid load path `{s}`: expected `:file.bzl`, `//package:file.bzl` or `@cell//package:file.bzl`");
    };
    let path = match rest.split_once(':') {
        Some((pkg, file)) => {
            if file.is_empty() || file.contains('/') && pkg.is_empty() && file.starts_with('/') {
                bail!("Invalid load path `{s}`");
            }
            join(pkg, file)
        }
        None => rest.clone(),
    };
    if path
        .split('/')
        .any(|c| c == ".." || c == "." || c.is_empty())
    {
        bail!("Invalid load path `{s}`: the path must be normalized");
    }
    if !path.ends_with(".bzl") {
        bail!("Invalid load path `{s}`: only `.bzl` files can be loaded");
    }
    let project = cells.project_path(&cell, &path)?;
    let (owner, _) = cells.owner_of(&project);
    if owner != cell {
        bail!(
            "Load path `{s}` names `{cell}//{path}`, but that file belongs to cell `{owner}`; \
             load it through its own cell (`@{owner}//...`)"
        );
    }
    Ok(ImportPath { cell, path })
}

struct MapLoader(HashMap<String, FrozenModule>);

impl FileLoader for MapLoader {
    fn load(&self, path: &str) -> starlark::Result<FrozenModule> {
        self.0.get(path).cloned().ok_or_else(|| {
            starlark::Error::new_other(anyhow!("internal: `{path}` was not preloaded"))
        })
    }
}

fn line_of(span: &starlark::codemap::FileSpan) -> usize {
    span.resolve_span().begin.line + 1
}

impl Loader {
    fn prelude_cell(&self) -> Option<String> {
        self.workspace().cells.resolve("prelude").map(str::to_owned)
    }

    /// The prelude module, if the workspace has a `prelude` cell with a `prelude.bzl`.
    fn prelude(&self, stack: &mut Vec<String>) -> Result<Option<FrozenModule>> {
        let Some(cell) = self.prelude_cell() else {
            return Ok(None);
        };
        let ip = ImportPath {
            cell,
            path: "prelude.bzl".to_owned(),
        };
        let project = self.workspace().cells.project_path(&ip.cell, &ip.path)?;
        if !self.workspace().root.join(&project).is_file() {
            return Ok(None);
        }
        if stack.contains(&ip.to_string()) {
            return Ok(None);
        }
        self.load_bzl(&ip, stack).map(Some)
    }

    /// Evaluates (once) and returns a .bzl module.
    pub(crate) fn load_bzl(
        &self,
        ip: &ImportPath,
        stack: &mut Vec<String>,
    ) -> Result<FrozenModule> {
        let key = ip.to_string();
        if let Some(m) = self.bzl_cache.lock().unwrap().get(&key) {
            return Ok(m.clone());
        }
        if let Some(pos) = stack.iter().position(|s| *s == key) {
            let mut cycle: Vec<String> = stack[pos..].to_vec();
            cycle.push(key.clone());
            bail!("Load cycle detected: {}", cycle.join(" -> "));
        }
        stack.push(key.clone());
        let r = self.eval_file(&ip.cell, &ip.path, FileKind::Bzl, None, stack);
        stack.pop();
        let m = r?.0.expect("a .bzl evaluation yields a module");
        self.bzl_cache.lock().unwrap().insert(key, m.clone());
        Ok(m)
    }

    /// Evaluates one build file into its targets.
    pub(crate) fn eval_buildfile(
        &self,
        cell: &str,
        package: &str,
        buildfile_name: &str,
    ) -> Result<EvaluatedBuildFile> {
        let path = join(package, buildfile_name);
        let project = self.workspace().cells.project_path(cell, &path)?;
        let state = PackageState {
            cell: cell.to_owned(),
            package: package.to_owned(),
            buildfile: project.clone(),
            targets: RefCell::new(indexmap::IndexMap::new()),
            platforms: RefCell::new(HashMap::new()),
        };
        let mut stack = Vec::new();
        let (_, state) = self.eval_file(cell, &path, FileKind::Buck, Some(state), &mut stack)?;
        let state = state.expect("build file state");
        Ok(EvaluatedBuildFile {
            buildfile: project,
            targets: state.targets.into_inner(),
            platforms: state.platforms.into_inner(),
        })
    }

    fn eval_file(
        &self,
        cell: &str,
        path: &str,
        kind: FileKind,
        package: Option<PackageState>,
        stack: &mut Vec<String>,
    ) -> Result<(Option<FrozenModule>, Option<PackageState>)> {
        let ws = self.workspace();
        let project = ws.cells.project_path(cell, path)?;
        let buck_name = match kind {
            FileKind::Buck => match path.rsplit_once('/') {
                Some((p, f)) => format!("{cell}//{p}:{f}"),
                None => format!("{cell}//:{path}"),
            },
            FileKind::Bzl => format!("{cell}//{path}"),
        };
        let abs = ws.root.join(&project);
        let src = match std::fs::read_to_string(&abs) {
            Ok(s) => s,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                bail!("File not found: {cell}//{path}")
            }
            Err(e) => return Err(anyhow!(e).context(format!("Reading {project}"))),
        };
        let ast = AstModule::parse(&project, src, &dialect(kind))
            .map_err(|e| anyhow!("{}", e).context(format!("Error parsing: `{buck_name}`")))?;
        let what = match kind {
            FileKind::Buck => format!("Error evaluating build file: `{buck_name}`"),
            FileKind::Bzl => format!("Error evaluating module: `{buck_name}`"),
        };
        let dir = match path.rsplit_once('/') {
            Some((d, _)) => d,
            None => "",
        };
        let mut modules = HashMap::new();
        // buck2 reports a failed load as `From load at <file>:<line>` alone, without the
        // "Error evaluating ..." line of the loading file.
        for load in ast.loads() {
            let at = format!("From load at {}:{}", project, line_of(&load.span));
            let ip =
                resolve_load(load.module_id, cell, dir, self).map_err(|e| e.context(at.clone()))?;
            let m = self
                .load_bzl(&ip, stack)
                .map_err(|e| e.context(at.clone()))?;
            modules.insert(load.module_id.to_owned(), m);
        }
        let in_prelude_cell = self.prelude_cell().as_deref() == Some(cell);
        let prelude = if kind == FileKind::Buck || !in_prelude_cell {
            self.prelude(stack).with_context(|| what.clone())?
        } else {
            None
        };
        let loader = MapLoader(modules);
        let ctx = BuildContext {
            loader: self,
            file_cell: cell.to_owned(),
            file_path: path.to_owned(),
            package,
        };
        let frozen = Module::with_temp_heap(|module| -> Result<Option<FrozenModule>> {
            if let Some(p) = &prelude {
                module.import_public_symbols(p);
                if kind == FileKind::Buck {
                    if let Some(native) = p.get_option("native")? {
                        let v = native.value();
                        let s = StructRef::from_value(v)
                            .ok_or_else(|| anyhow!("`native` in `prelude.bzl` must be a struct"))?;
                        for (k, x) in s.iter() {
                            module.set(
                                k.as_str(),
                                module.heap().access_owned_frozen_value(
                                    &native.map(|_| x.unpack_frozen().expect("frozen")),
                                ),
                            );
                        }
                    }
                }
            }
            {
                let mut eval = Evaluator::new(&module);
                eval.set_loader(&loader);
                eval.extra = Some(&ctx);
                // `into_anyhow` keeps the causes of a native error (a coercion error's
                // attribute type and value) as separate entries of the chain, as buck2 does.
                eval.eval_module(ast, self.globals())
                    .map_err(|e| e.into_anyhow().context(what.clone()))?;
            }
            if kind == FileKind::Buck {
                return Ok(None);
            }
            // Private names too: buck2 accepts a rule bound to `_name` (a macro's inner
            // rule), and `FrozenModule::names` lists public names only.
            let names: Vec<String> = module
                .names_and_visibilities()
                .map(|(n, _)| n.as_str().to_owned())
                .collect();
            let frozen = module
                .freeze()
                .map_err(|e| anyhow!("{e:?}").context(what.clone()))?;
            for name in names {
                let (v, _) = frozen.get_any_visibility(&name)?;
                if let Some(r) = FrozenRuleCallable::from_value(v.value()) {
                    r.finalize(&v)?;
                }
            }
            Ok(Some(frozen))
        })?;
        Ok((frozen, ctx.package))
    }
}
