//! Attribute coercion: a Starlark value from a BUCK call -> [`CoercedAttr`], with buck2's
//! error texts.

use std::path::Path;

use anyhow::{anyhow, bail, Result};
use starlark::values::dict::DictRef;
use starlark::values::list::ListRef;
use starlark::values::tuple::TupleRef;
use starlark::values::{UnpackValue, Value};

use super::cells::{join, Cells};
use super::context::BuildContext;
use super::pattern::parse_label;
use super::select::{view, SelectView};
use crate::model::{AttrType, CoercedAttr};

/// Where coercion happens: the package labels and sources are relative to.
pub struct CoerceCx<'a> {
    pub cells: &'a Cells,
    pub cell: &'a str,
    pub package: &'a str,
    pub project_root: &'a Path,
    /// Sources must exist and stay inside the package (false for rule defaults).
    pub check_sources: bool,
    /// Build file names: a source may not lie inside a nested package.
    pub buildfiles: &'a [String],
}

/// A source path with `..`: buck2's message, and buck2 exits 2 for it (it tags this error
/// as an infrastructure error, not a user error); `cli` maps it to the same code.
#[derive(Debug, thiserror::Error)]
#[error("expected a normalized path but got an un-normalized path instead: `{0}`")]
pub struct UnnormalizedPath(pub String);

/// How buck2 writes an attribute type in ``Error coercing attribute `x` of type `...` ``.
pub fn attrs_call(ty: &AttrType) -> String {
    let list = |xs: &[AttrType]| xs.iter().map(attrs_call).collect::<Vec<_>>().join(", ");
    match ty {
        AttrType::Any => "attrs.any()".into(),
        AttrType::String => "attrs.string()".into(),
        AttrType::Int => "attrs.int()".into(),
        AttrType::Bool => "attrs.bool()".into(),
        AttrType::List(x) => format!("attrs.list({})", attrs_call(x)),
        AttrType::Tuple(xs) => format!("attrs.tuple({})", list(xs)),
        AttrType::Dict { key, value, .. } => {
            format!("attrs.dict({}, {})", attrs_call(key), attrs_call(value))
        }
        AttrType::Option(x) => format!("attrs.option({})", attrs_call(x)),
        AttrType::OneOf(xs) => format!("attrs.one_of({})", list(xs)),
        AttrType::Enum(_) => "attrs.enum()".into(),
        AttrType::Source { .. } => "attrs.source()".into(),
        AttrType::Dep { .. } => "attrs.dep()".into(),
        AttrType::Label => "attrs.label()".into(),
        AttrType::Arg => "attrs.arg()".into(),
    }
}

/// The name buck2 prints for an attribute type in coercion errors.
pub fn type_name(ty: &AttrType) -> String {
    match ty {
        AttrType::Any => "any".into(),
        AttrType::String => "str".into(),
        AttrType::Int => "int".into(),
        AttrType::Bool => "bool".into(),
        AttrType::List(x) => format!("list[{}]", type_name(x)),
        AttrType::Tuple(xs) => {
            format!(
                "tuple[{}]",
                xs.iter().map(type_name).collect::<Vec<_>>().join(", ")
            )
        }
        AttrType::Dict { key, value, .. } => {
            format!("dict[{}, {}]", type_name(key), type_name(value))
        }
        AttrType::Option(x) => format!("option[{}]", type_name(x)),
        AttrType::OneOf(xs) => {
            format!(
                "one_of[{}]",
                xs.iter().map(type_name).collect::<Vec<_>>().join(", ")
            )
        }
        AttrType::Enum(_) => "enum".into(),
        AttrType::Source { .. } => "source".into(),
        AttrType::Dep { .. } => "dependency".into(),
        AttrType::Label => "label".into(),
        AttrType::Arg => "arg".into(),
    }
}

fn expected(ty: &AttrType, v: Value) -> anyhow::Error {
    anyhow!(
        "Expected `{}`, but got `{} (repr: {})`",
        type_name(ty),
        v.get_type(),
        v.to_repr()
    )
}

fn items<'v>(v: Value<'v>) -> Option<Vec<Value<'v>>> {
    if let Some(l) = ListRef::from_value(v) {
        return Some(l.content().to_vec());
    }
    TupleRef::from_value(v).map(|t| t.content().to_vec())
}

/// Coerces a value given in a BUCK call (selects allowed).
pub fn coerce(ty: &AttrType, v: Value, cx: &CoerceCx) -> Result<CoercedAttr> {
    if let Some(sel) = view(v) {
        return match sel {
            SelectView::Branches(branches) => {
                let mut out = Vec::new();
                for (key, value) in branches {
                    let key = if key == "DEFAULT" {
                        key
                    } else {
                        parse_label(&key, cx.cell, cx.package, cx.cells)?.to_string()
                    };
                    out.push((key, coerce(ty, value, cx)?));
                }
                Ok(CoercedAttr::Select(out))
            }
            SelectView::Concat(parts) => Ok(CoercedAttr::Concat(
                parts
                    .into_iter()
                    .map(|p| coerce(ty, p, cx))
                    .collect::<Result<_>>()?,
            )),
        };
    }
    coerce_plain(ty, v, cx)
}

fn coerce_plain(ty: &AttrType, v: Value, cx: &CoerceCx) -> Result<CoercedAttr> {
    match ty {
        AttrType::Any => coerce_any(v),
        AttrType::String => v
            .unpack_str()
            .map(|s| CoercedAttr::String(s.to_owned()))
            .ok_or_else(|| expected(ty, v)),
        AttrType::Int => {
            if v.unpack_bool().is_some() {
                return Err(expected(ty, v));
            }
            i64::unpack_value(v)
                .ok()
                .flatten()
                .map(CoercedAttr::Int)
                .ok_or_else(|| expected(ty, v))
        }
        AttrType::Bool => v
            .unpack_bool()
            .map(CoercedAttr::Bool)
            .ok_or_else(|| expected(ty, v)),
        AttrType::List(inner) => {
            let xs = items(v).ok_or_else(|| expected(ty, v))?;
            Ok(CoercedAttr::List(
                xs.into_iter()
                    .map(|x| coerce(inner, x, cx))
                    .collect::<Result<_>>()?,
            ))
        }
        AttrType::Tuple(tys) => {
            let xs = items(v).ok_or_else(|| expected(ty, v))?;
            if xs.len() != tys.len() {
                bail!(
                    "Expected a tuple of {} elements, but got {} (repr: {})",
                    tys.len(),
                    xs.len(),
                    v.to_repr()
                );
            }
            Ok(CoercedAttr::Tuple(
                tys.iter()
                    .zip(xs)
                    .map(|(t, x)| coerce(t, x, cx))
                    .collect::<Result<_>>()?,
            ))
        }
        AttrType::Dict { key, value, sorted } => {
            let d = DictRef::from_value(v).ok_or_else(|| expected(ty, v))?;
            let mut out = Vec::new();
            for (k, x) in d.iter() {
                out.push((coerce(key, k, cx)?, coerce(value, x, cx)?));
            }
            if *sorted {
                out.sort_by_key(|a| sort_key(&a.0));
            }
            Ok(CoercedAttr::Dict(out))
        }
        AttrType::Option(inner) => {
            if v.is_none() {
                Ok(CoercedAttr::None)
            } else {
                coerce(inner, v, cx)
            }
        }
        AttrType::OneOf(tys) => {
            let mut errors = Vec::new();
            for t in tys {
                match coerce(t, v, cx) {
                    Ok(c) => return Ok(c),
                    Err(e) => errors.push(format!("{e:#}")),
                }
            }
            Err(anyhow!("{}\n{}", expected(ty, v), errors.join("\n")))
        }
        AttrType::Enum(variants) => {
            let s = v.unpack_str().ok_or_else(|| expected(ty, v))?;
            let lower = s.to_lowercase();
            if variants.contains(&lower) {
                Ok(CoercedAttr::String(lower))
            } else {
                bail!(
                    "Invalid enum value `{s}`, expected one of: {}",
                    variants
                        .iter()
                        .map(|v| format!("`{v}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            }
        }
        AttrType::Source { allow_directory } => {
            let s = v.unpack_str().ok_or_else(|| expected(ty, v))?;
            coerce_source(s, *allow_directory, cx)
        }
        AttrType::Dep { kind, .. } => {
            let s = v.unpack_str().ok_or_else(|| expected(ty, v))?;
            Ok(CoercedAttr::Dep {
                label: parse_label(s, cx.cell, cx.package, cx.cells)?,
                kind: *kind,
            })
        }
        AttrType::Label => {
            let s = v.unpack_str().ok_or_else(|| expected(ty, v))?;
            Ok(CoercedAttr::Label(parse_label(
                s, cx.cell, cx.package, cx.cells,
            )?))
        }
        AttrType::Arg => {
            let s = v.unpack_str().ok_or_else(|| expected(ty, v))?;
            Ok(CoercedAttr::Arg {
                raw: s.to_owned(),
                macro_deps: macro_labels(s, cx)?,
            })
        }
    }
}

fn sort_key(c: &CoercedAttr) -> String {
    match c {
        CoercedAttr::String(s) => s.clone(),
        CoercedAttr::Int(i) => format!("{i:020}"),
        other => format!("{other:?}"),
    }
}

fn coerce_any(v: Value) -> Result<CoercedAttr> {
    if v.is_none() {
        return Ok(CoercedAttr::None);
    }
    if let Some(b) = v.unpack_bool() {
        return Ok(CoercedAttr::Bool(b));
    }
    if let Ok(Some(i)) = i64::unpack_value(v) {
        return Ok(CoercedAttr::Int(i));
    }
    if let Some(s) = v.unpack_str() {
        return Ok(CoercedAttr::String(s.to_owned()));
    }
    if let Some(l) = ListRef::from_value(v) {
        return Ok(CoercedAttr::List(
            l.content()
                .iter()
                .map(|x| coerce_any(*x))
                .collect::<Result<_>>()?,
        ));
    }
    if let Some(t) = TupleRef::from_value(v) {
        return Ok(CoercedAttr::Tuple(
            t.content()
                .iter()
                .map(|x| coerce_any(*x))
                .collect::<Result<_>>()?,
        ));
    }
    if let Some(d) = DictRef::from_value(v) {
        let mut out = Vec::new();
        for (k, x) in d.iter() {
            out.push((coerce_any(k)?, coerce_any(x)?));
        }
        return Ok(CoercedAttr::Dict(out));
    }
    if view(v).is_some() {
        bail!("`select()` is not supported inside `attrs.any()` values");
    }
    bail!(
        "Expected `any` (a None, bool, int, string, list, tuple or dict), but got `{} (repr: {})`",
        v.get_type(),
        v.to_repr()
    )
}

fn is_label_like(s: &str) -> bool {
    s.starts_with(':') || s.contains("//")
}

fn coerce_source(s: &str, allow_directory: bool, cx: &CoerceCx) -> Result<CoercedAttr> {
    if is_label_like(s) {
        return Ok(CoercedAttr::SourceDep(parse_label(
            s, cx.cell, cx.package, cx.cells,
        )?));
    }
    let mut parts: Vec<&str> = Vec::new();
    for seg in s.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                return Err(anyhow::Error::new(UnnormalizedPath(s.to_owned()))
                    .context(format!("Coercing `{s}` as a source")))
            }
            seg => parts.push(seg),
        }
    }
    if parts.is_empty() {
        bail!("Empty source path `{s}`");
    }
    let package_relative = parts.join("/");
    let cell_dir = cx.cells.path(cx.cell).unwrap_or("");
    let project_path = join(&join(cell_dir, cx.package), &package_relative);
    if cx.check_sources {
        let abs = cx.project_root.join(&project_path);
        if !abs.exists() {
            bail!("Source file `{s}` does not exist (looked for `{project_path}`)");
        }
        if abs.is_dir() && !allow_directory {
            bail!("Source `{s}` is a directory; declare the attribute with `attrs.source(allow_directory = True)`");
        }
        // Each directory between the package and the file must not be a package itself.
        let pkg_dir = cx.project_root.join(join(cell_dir, cx.package));
        let mut dir = pkg_dir.clone();
        for seg in &parts[..parts.len() - 1] {
            dir.push(seg);
            if cx.buildfiles.iter().any(|b| dir.join(b).is_file()) {
                let nested = dir
                    .strip_prefix(cx.project_root)
                    .unwrap_or(&dir)
                    .to_string_lossy();
                bail!(
                    "Source file `{s}` of package `{}//{}` belongs to the nested package in \
                     `{nested}`; refer to it through a target of that package",
                    cx.cell,
                    cx.package
                );
            }
        }
    }
    Ok(CoercedAttr::SourceFile {
        project_path,
        package_relative,
    })
}

/// Labels referenced by `$(location //x:y)`, `$(exe :t)` and similar macros in an arg.
fn macro_labels(s: &str, cx: &CoerceCx) -> Result<Vec<crate::model::ProvidersLabel>> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(pos) = rest.find("$(") {
        let after = &rest[pos + 2..];
        let Some(end) = after.find(')') else { break };
        let mut words = after[..end].split_whitespace();
        let name = words.next().unwrap_or("");
        if matches!(
            name,
            "location" | "exe" | "exe_target" | "location_exec" | "query_targets" | "classpath"
        ) {
            for w in words {
                out.push(parse_label(w, cx.cell, cx.package, cx.cells)?);
            }
        }
        rest = &after[end + 1..];
    }
    Ok(out)
}

/// Coerces an `attrs.*(default = ...)` in the context of the .bzl declaring it.
pub fn coerce_default(ty: &AttrType, v: Value, bx: &BuildContext) -> Result<CoercedAttr> {
    let dir = bx.file_dir();
    let cx = CoerceCx {
        cells: &bx.loader.workspace().cells,
        cell: &bx.file_cell,
        package: &dir,
        project_root: &bx.loader.workspace().root,
        check_sources: false,
        buildfiles: &bx.loader.workspace().buildfile_names,
    };
    coerce(ty, v, &cx)
        .map_err(|e| anyhow!("Invalid default for `attrs.{}()`: {e:#}", type_name(ty)))
}
