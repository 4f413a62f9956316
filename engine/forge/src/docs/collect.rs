//! Loads each `.bzl` of a symbol pattern and reads what its public symbols document.

use anyhow::{bail, Context, Result};
use starlark::docs::{DocItem, DocMember};
use starlark::values::ValueLike;

use super::literal::{attr_type, coerced};
use crate::analysis::providers::FrozenProviderCallable;
use crate::interpreter::eval::{resolve_load, ImportPath};
use crate::interpreter::rule::FrozenRuleCallable;
use crate::interpreter::Loader;

/// The documented symbols of one `.bzl` file, in the order the file defines them.
#[derive(Debug)]
pub struct FileDocs {
    /// The cell and the cell-relative path: `root`, `rules/cargo.bzl`.
    pub cell: String,
    pub path: String,
    /// The module docstring (the file's first statement, if a string).
    pub doc: String,
    pub symbols: Vec<Symbol>,
}

#[derive(Debug)]
pub struct Symbol {
    pub name: String,
    pub doc: String,
    pub kind: SymbolKind,
}

/// One parameter of a rule, provider or macro: name, type, default (`None`: required), doc.
#[derive(Debug)]
pub struct Param {
    pub name: String,
    pub ty: String,
    pub default: Option<String>,
    pub doc: String,
}

#[derive(Debug)]
pub enum SymbolKind {
    Rule { params: Vec<Param> },
    Provider { fields: Vec<Param> },
    Function { params: Vec<Param> },
}

/// `//pkg:file.bzl`, `cell//pkg:file.bzl` or `@cell//pkg:file.bzl`: every public symbol of
/// the file, as buck2's `docs starlark` patterns. (buck2's help also names a
/// `//pkg:file.bzl:symbol` form, which upstream 0676d75903 rejects; forge rejects it too.)
fn parse_pattern(pattern: &str, loader: &Loader) -> Result<ImportPath> {
    if !pattern.ends_with(".bzl") {
        bail!("Invalid symbol pattern `{pattern}`: expected `//pkg:file.bzl`");
    }
    let load = if pattern.starts_with("//") || pattern.starts_with('@') {
        pattern.to_owned()
    } else {
        format!("@{pattern}")
    };
    resolve_load(&load, "root", "", loader)
        .with_context(|| format!("Resolving symbol pattern `{pattern}`"))
}

/// The documentation of the public symbols of each file, one entry per pattern, in order.
pub fn collect(loader: &Loader, patterns: &[String]) -> Result<Vec<FileDocs>> {
    let mut files = Vec::new();
    for pattern in patterns {
        let ip = parse_pattern(pattern, loader)?;
        let module = loader
            .load_bzl(&ip, &mut Vec::new())
            .with_context(|| format!("Loading `{ip}`"))?;
        let mut symbols = Vec::new();
        for name in module.names() {
            let name = name.as_str().to_owned();
            let value = module.get(&name)?;
            if let Some(s) = symbol(&name, value.value().to_value()) {
                symbols.push(s);
            }
        }
        let doc = module
            .documentation()
            .docs
            .map(|d| join_doc(&d.summary, d.details.as_deref()))
            .unwrap_or_default();
        files.push(FileDocs {
            cell: ip.cell.clone(),
            path: ip.path.clone(),
            doc,
            symbols,
        });
    }
    Ok(files)
}

fn join_doc(summary: &str, details: Option<&str>) -> String {
    match details {
        Some(d) if !d.is_empty() => format!("{summary}\n\n{d}"),
        _ => summary.to_owned(),
    }
}

/// A rule, a provider or a function; constants are not documented (as in buck2).
fn symbol(name: &str, v: starlark::values::Value) -> Option<Symbol> {
    if let Some(rule) = v.downcast_ref::<FrozenRuleCallable>() {
        let spec = rule.spec()?;
        let params = spec
            .attrs
            .iter()
            .filter(|(_, a)| !a.default_only)
            .map(|(n, a)| Param {
                name: n.clone(),
                ty: attr_type(&a.ty),
                default: a.default.as_ref().map(coerced),
                doc: a.doc.clone(),
            })
            .collect();
        return Some(Symbol {
            name: name.to_owned(),
            doc: spec.doc.clone(),
            kind: SymbolKind::Rule { params },
        });
    }
    if let Some(p) = v.downcast_ref::<FrozenProviderCallable>() {
        let fields = p
            .meta
            .fields
            .iter()
            .enumerate()
            .map(|(i, f)| Param {
                name: f.clone(),
                ty: p.field_type(i).unwrap_or_default(),
                default: p.field_default(i).or_else(|| {
                    (!p.meta.required.get(i).copied().unwrap_or(false)).then(|| "None".to_owned())
                }),
                doc: String::new(),
            })
            .collect();
        return Some(Symbol {
            name: name.to_owned(),
            doc: p.doc.clone(),
            kind: SymbolKind::Provider { fields },
        });
    }
    if let DocItem::Member(DocMember::Function(f)) = v.documentation() {
        let doc = f
            .docs
            .as_ref()
            .map(|d| join_doc(&d.summary, d.details.as_deref()))
            .unwrap_or_default();
        let params = f
            .params
            .pos_or_named
            .iter()
            .chain(&f.params.named_only)
            .map(|p| Param {
                name: p.name.clone(),
                ty: String::new(),
                default: p.default_value.clone(),
                doc: p
                    .docs
                    .as_ref()
                    .map(|d| join_doc(&d.summary, d.details.as_deref()))
                    .unwrap_or_default(),
            })
            .chain(f.params.kwargs.iter().map(|p| Param {
                name: format!("**{}", p.name),
                ty: String::new(),
                default: Some(String::new()),
                doc: String::new(),
            }))
            .collect();
        return Some(Symbol {
            name: name.to_owned(),
            doc,
            kind: SymbolKind::Function { params },
        });
    }
    None
}
