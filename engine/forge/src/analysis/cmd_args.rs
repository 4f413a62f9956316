//! `cmd_args`: command lines built from strings and artifacts, rendered exactly as buck2
//! renders them (project-relative paths, inside-out formatting, shell quoting).

use std::sync::{Arc, Mutex};

use allocative::Allocative;
use derive_more::Display;
use regex::Regex;
use starlark::any::ProvidesStaticType;
use starlark::environment::{Methods, MethodsBuilder};
use starlark::starlark_module;
use starlark::starlark_simple_value;
use starlark::values::list::{AllocList, ListRef};
use starlark::values::tuple::{TupleRef, UnpackTuple};
use starlark::values::{starlark_value, Heap, NoSerialize, StarlarkValue, Value, ValueLike};

use super::artifact::{ArtifactData, StarlarkArtifact, StarlarkOutputArtifact};
use crate::model::ArtifactRef;

#[derive(Debug, thiserror::Error)]
pub enum CmdArgsError {
    #[error("Invalid command line argument `{repr}` of type `{ty}`: expected a string, an artifact, an output artifact, `cmd_args`, `RunInfo` or a list of these")]
    BadArg { repr: String, ty: String },
    #[error("`quote` must be \"shell\", got `{0}`")]
    BadQuote(String),
    #[error("`relative_to` must be an artifact or a tuple `(artifact, parent)`, got `{0}`")]
    BadRelativeTo(String),
    #[error(
        "`replace_regex` must be a `(pattern, replacement)` tuple or a list of them, got `{0}`"
    )]
    BadReplaceRegex(String),
    #[error("Invalid regex `{0}` in `replace_regex`: {1}")]
    InvalidRegex(String, regex::Error),
}

/// One element of a command line.
#[derive(Debug, Clone)]
pub enum ArgItem {
    Str(String),
    Artifact(Arc<ArtifactData>),
    Output(Arc<ArtifactData>),
    /// A nested `cmd_args` (or a `RunInfo`'s args), kept with its own options.
    Args(Arc<CmdArgsData>),
}

#[derive(Debug, Clone, Default)]
pub struct ArgOptions {
    pub delimiter: Option<String>,
    pub format: Option<String>,
    pub prepend: Option<String>,
    pub quote_shell: bool,
    pub ignore_artifacts: bool,
    pub absolute_prefix: Option<String>,
    pub absolute_suffix: Option<String>,
    pub parent: usize,
    pub relative_to: Option<(Arc<ArtifactData>, usize)>,
    pub replace_regex: Vec<(Regex, String)>,
}

#[derive(Debug, Clone, Default)]
pub struct CmdArgsData {
    pub items: Vec<ArgItem>,
    pub hidden: Vec<ArgItem>,
    pub opts: ArgOptions,
}

/// Inputs and outputs an action gets from its command line.
#[derive(Debug, Default)]
pub struct ArgDeps {
    pub inputs: Vec<ArtifactRef>,
    /// The artifacts behind `inputs` (for `with_inputs = True` results).
    pub artifacts: Vec<Arc<ArtifactData>>,
    pub outputs: Vec<Arc<ArtifactData>>,
}

impl ArgDeps {
    pub fn add_input(&mut self, a: &Arc<ArtifactData>) {
        if !self.inputs.contains(&a.input) {
            self.inputs.push(a.input.clone());
            self.artifacts.push(a.clone());
        }
    }
}

/// The quoting buck2 applies for `quote = "shell"`: bare words stay as they are, anything
/// else is double-quoted with `$`, `` ` ``, `"` and `\` escaped.
pub fn shell_quote(s: &str) -> String {
    if s.is_empty() {
        return "\"\"".to_owned();
    }
    let needs = s.chars().any(|c| {
        matches!(
            c,
            '|' | '&'
                | ';'
                | '<'
                | '>'
                | '('
                | ')'
                | '$'
                | '`'
                | '\\'
                | '"'
                | '\''
                | ' '
                | '\t'
                | '\r'
                | '\n'
                | '*'
                | '?'
                | '['
                | '#'
                | '~'
                | '='
                | '%'
        )
    });
    if !needs {
        return s.to_owned();
    }
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        if matches!(c, '$' | '`' | '"' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

fn components(p: &str) -> Vec<&str> {
    p.split('/')
        .filter(|s| !s.is_empty() && *s != ".")
        .collect()
}

fn strip_parents(p: &str, n: usize) -> String {
    let c = components(p);
    c[..c.len().saturating_sub(n)].join("/")
}

/// `path` relative to the directory `base` (both project-relative).
fn relative_path(path: &str, base: &str) -> String {
    let p = components(path);
    let b = components(base);
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<&str> = vec![".."; b.len() - common];
    parts.extend(&p[common..]);
    parts.join("/")
}

impl CmdArgsData {
    /// Renders the command line; `project_root` makes artifact paths absolute (`buck2 run`).
    pub fn render(&self, project_root: Option<&str>) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = Vec::new();
        self.render_into(project_root, &mut stack, &mut out);
        out
    }

    fn render_into<'a>(
        &'a self,
        root: Option<&str>,
        path_opts: &mut Vec<&'a ArgOptions>,
        out: &mut Vec<String>,
    ) {
        path_opts.push(&self.opts);
        let mut produced = Vec::new();
        for item in &self.items {
            match item {
                ArgItem::Str(s) => produced.push(s.clone()),
                ArgItem::Artifact(a) | ArgItem::Output(a) => {
                    produced.push(render_artifact(a, root, path_opts))
                }
                ArgItem::Args(inner) => inner.render_into(root, path_opts, &mut produced),
            }
        }
        path_opts.pop();
        let formatted: Vec<String> = produced.into_iter().map(|s| self.format_one(s)).collect();
        match &self.opts.delimiter {
            Some(d) => {
                if !formatted.is_empty() {
                    if let Some(p) = &self.opts.prepend {
                        out.push(p.clone());
                    }
                    out.push(formatted.join(d));
                }
            }
            None => {
                for s in formatted {
                    if let Some(p) = &self.opts.prepend {
                        out.push(p.clone());
                    }
                    out.push(s);
                }
            }
        }
    }

    fn format_one(&self, mut s: String) -> String {
        for (re, rep) in &self.opts.replace_regex {
            s = re.replace_all(&s, rep.as_str()).into_owned();
        }
        if let Some(f) = &self.opts.format {
            s = f.replace("{}", &s);
        }
        if self.opts.quote_shell {
            s = shell_quote(&s);
        }
        s
    }

    /// Visits the artifacts (rendered and `hidden`) the command line reads and writes.
    pub fn visit_deps(&self, deps: &mut ArgDeps) {
        self.visit_deps_inner(false, deps)
    }

    fn visit_deps_inner(&self, ignore: bool, deps: &mut ArgDeps) {
        let ignore = ignore || self.opts.ignore_artifacts;
        for item in self.items.iter().chain(&self.hidden) {
            match item {
                ArgItem::Str(_) => {}
                ArgItem::Artifact(a) => {
                    if !ignore {
                        deps.add_input(a);
                    }
                }
                ArgItem::Output(a) => {
                    if !deps.outputs.iter().any(|o| Arc::ptr_eq(o, a)) {
                        deps.outputs.push(a.clone());
                    }
                }
                ArgItem::Args(inner) => inner.visit_deps_inner(ignore, deps),
            }
        }
    }
}

fn render_artifact(a: &ArtifactData, root: Option<&str>, path_opts: &[&ArgOptions]) -> String {
    let mut p = a.path.clone();
    let mut relative = false;
    let mut prefix = String::new();
    let mut suffix = String::new();
    for o in path_opts.iter().rev() {
        if o.parent > 0 {
            p = strip_parents(&p, o.parent);
        }
        if let Some((dir, n)) = &o.relative_to {
            p = relative_path(&p, &strip_parents(&dir.path, *n));
            relative = true;
        }
        if let Some(pre) = &o.absolute_prefix {
            prefix = format!("{pre}{prefix}");
        }
        if let Some(suf) = &o.absolute_suffix {
            suffix.push_str(suf);
        }
    }
    let rendered = if !relative && root.is_some() {
        let root = root.unwrap_or_default();
        if p.is_empty() {
            root.to_owned()
        } else {
            format!("{root}/{p}")
        }
    } else if p.is_empty() {
        ".".to_owned()
    } else if !relative && p == a.path {
        a.rendered_path()
    } else {
        p
    };
    format!("{prefix}{rendered}{suffix}")
}

/// Appends a Starlark value (string, artifact, cmd_args, RunInfo, list of these) to `items`.
pub fn add_value(items: &mut Vec<ArgItem>, v: Value) -> anyhow::Result<()> {
    if let Some(s) = v.unpack_str() {
        items.push(ArgItem::Str(s.to_owned()));
    } else if let Some(a) = StarlarkArtifact::from_value(v) {
        items.push(ArgItem::Artifact(a.0.clone()));
    } else if let Some(o) = StarlarkOutputArtifact::from_value(v) {
        items.push(ArgItem::Output(o.0.clone()));
    } else if let Some(c) = StarlarkCmdArgs::from_value(v) {
        items.push(ArgItem::Args(Arc::new(c.data())));
    } else if let Some(args) = super::providers::run_info_args(v) {
        items.push(ArgItem::Args(args));
    } else if let Some(l) = ListRef::from_value(v) {
        for x in l.iter() {
            add_value(items, x)?;
        }
    } else if let Some(t) = TupleRef::from_value(v) {
        for x in t.iter() {
            add_value(items, x)?;
        }
    } else if let Some(l) = v.downcast_ref::<super::label::StarlarkLabel>() {
        items.push(ArgItem::Str(l.0.to_string()));
    } else if let Some(l) = v.downcast_ref::<super::label::StarlarkTargetLabel>() {
        items.push(ArgItem::Str(l.0.to_string()));
    } else {
        return Err(CmdArgsError::BadArg {
            repr: v.to_repr(),
            ty: v.get_type().to_owned(),
        }
        .into());
    }
    Ok(())
}

/// Any value usable on a command line, as command line data.
pub fn value_to_args(v: Value) -> anyhow::Result<CmdArgsData> {
    if let Some(c) = StarlarkCmdArgs::from_value(v) {
        return Ok(c.data());
    }
    let mut data = CmdArgsData::default();
    add_value(&mut data.items, v)?;
    Ok(data)
}

fn parse_relative_to(v: Value) -> anyhow::Result<(Arc<ArtifactData>, usize)> {
    if let Some(a) = StarlarkArtifact::from_value(v) {
        return Ok((a.0.clone(), 0));
    }
    if let Some(t) = TupleRef::from_value(v) {
        if let [a, n] = t.content() {
            if let (Some(a), Some(n)) = (StarlarkArtifact::from_value(*a), n.unpack_i32()) {
                return Ok((a.0.clone(), n.max(0) as usize));
            }
        }
    }
    Err(CmdArgsError::BadRelativeTo(v.to_repr()).into())
}

fn parse_replace_regex(v: Value) -> anyhow::Result<Vec<(Regex, String)>> {
    let pair = |x: Value| -> anyhow::Result<(Regex, String)> {
        let t =
            TupleRef::from_value(x).ok_or_else(|| CmdArgsError::BadReplaceRegex(x.to_repr()))?;
        match t.content() {
            [p, r] => {
                let (Some(p), Some(r)) = (p.unpack_str(), r.unpack_str()) else {
                    return Err(CmdArgsError::BadReplaceRegex(x.to_repr()).into());
                };
                let re = Regex::new(p).map_err(|e| CmdArgsError::InvalidRegex(p.to_owned(), e))?;
                Ok((re, r.to_owned()))
            }
            _ => Err(CmdArgsError::BadReplaceRegex(x.to_repr()).into()),
        }
    };
    if let Some(l) = ListRef::from_value(v) {
        l.iter().map(pair).collect()
    } else {
        Ok(vec![pair(v)?])
    }
}

/// The keyword options of `cmd_args(...)`.
pub struct CmdArgsKwargs<'v> {
    pub hidden: Option<Value<'v>>,
    pub delimiter: Option<String>,
    pub format: Option<String>,
    pub prepend: Option<String>,
    pub quote: Option<String>,
    pub ignore_artifacts: bool,
    pub absolute_prefix: Option<String>,
    pub absolute_suffix: Option<String>,
    pub parent: i32,
    pub relative_to: Option<Value<'v>>,
    pub replace_regex: Option<Value<'v>>,
}

pub fn new_cmd_args<'v>(args: &[Value<'v>], kw: CmdArgsKwargs<'v>) -> anyhow::Result<CmdArgsData> {
    let mut data = CmdArgsData::default();
    for a in args {
        add_value(&mut data.items, *a)?;
    }
    if let Some(h) = kw.hidden {
        add_value(&mut data.hidden, h)?;
    }
    data.opts.quote_shell = match kw.quote.as_deref() {
        None => false,
        Some("shell") => true,
        Some(q) => return Err(CmdArgsError::BadQuote(q.to_owned()).into()),
    };
    data.opts.delimiter = kw.delimiter;
    data.opts.format = kw.format;
    data.opts.prepend = kw.prepend;
    data.opts.ignore_artifacts = kw.ignore_artifacts;
    data.opts.absolute_prefix = kw.absolute_prefix;
    data.opts.absolute_suffix = kw.absolute_suffix;
    data.opts.parent = kw.parent.max(0) as usize;
    if let Some(r) = kw.relative_to {
        data.opts.relative_to = Some(parse_relative_to(r)?);
    }
    if let Some(r) = kw.replace_regex {
        data.opts.replace_regex = parse_replace_regex(r)?;
    }
    Ok(data)
}

/// A `cmd_args` value. Mutable through `.add()`, hence the lock.
#[derive(Debug, ProvidesStaticType, NoSerialize, Allocative, Display)]
#[display("cmd_args({})", display_args(&self.data()))]
pub struct StarlarkCmdArgs(#[allocative(skip)] pub Mutex<CmdArgsData>);

fn display_args(d: &CmdArgsData) -> String {
    d.render(None)
        .iter()
        .map(|s| format!("{s:?}"))
        .collect::<Vec<_>>()
        .join(", ")
}

starlark_simple_value!(StarlarkCmdArgs);

impl StarlarkCmdArgs {
    pub fn new(data: CmdArgsData) -> StarlarkCmdArgs {
        StarlarkCmdArgs(Mutex::new(data))
    }

    pub fn data(&self) -> CmdArgsData {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    fn with<R>(&self, f: impl FnOnce(&mut CmdArgsData) -> R) -> R {
        f(&mut self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

#[starlark_value(type = "cmd_args")]
impl<'v> StarlarkValue<'v> for StarlarkCmdArgs {
    fn get_methods() -> Option<&'static Methods> {
        Some(CMD_ARGS_METHODS.methods())
    }
}

#[starlark_module]
fn cmd_args_methods(builder: &mut MethodsBuilder) {
    fn add<'v>(
        this: Value<'v>,
        #[starlark(args)] args: UnpackTuple<Value<'v>>,
    ) -> anyhow::Result<Value<'v>> {
        let me = StarlarkCmdArgs::from_value(this).expect("receiver is cmd_args");
        let mut items = Vec::new();
        for a in args.items {
            add_value(&mut items, a)?;
        }
        me.with(|d| d.items.extend(items));
        Ok(this)
    }

    fn relative_to<'v>(
        this: Value<'v>,
        #[starlark(require = pos)] directory: Value<'v>,
        #[starlark(require = named, default = 0)] parent: i32,
    ) -> anyhow::Result<Value<'v>> {
        let me = StarlarkCmdArgs::from_value(this).expect("receiver is cmd_args");
        let (dir, n) = parse_relative_to(directory)?;
        me.with(|d| d.opts.relative_to = Some((dir, n + parent.max(0) as usize)));
        Ok(this)
    }

    fn copy(this: &StarlarkCmdArgs) -> starlark::Result<StarlarkCmdArgs> {
        Ok(StarlarkCmdArgs::new(this.data()))
    }

    #[starlark(attribute)]
    fn inputs<'v>(this: &StarlarkCmdArgs, heap: Heap<'v>) -> starlark::Result<Value<'v>> {
        let mut seen = Vec::new();
        let mut arts = Vec::new();
        collect_input_artifacts(&this.data(), false, &mut seen, &mut arts);
        Ok(heap.alloc(AllocList(arts.into_iter().map(StarlarkArtifact))))
    }

    #[starlark(attribute)]
    fn outputs<'v>(this: &StarlarkCmdArgs, heap: Heap<'v>) -> starlark::Result<Value<'v>> {
        let mut deps = ArgDeps::default();
        this.data().visit_deps(&mut deps);
        Ok(heap.alloc(AllocList(
            deps.outputs.into_iter().map(StarlarkOutputArtifact),
        )))
    }
}

fn collect_input_artifacts(
    d: &CmdArgsData,
    ignore: bool,
    seen: &mut Vec<String>,
    out: &mut Vec<Arc<ArtifactData>>,
) {
    let ignore = ignore || d.opts.ignore_artifacts;
    for item in d.items.iter().chain(&d.hidden) {
        match item {
            ArgItem::Artifact(a) if !ignore && !seen.contains(&a.path) => {
                seen.push(a.path.clone());
                out.push(a.clone());
            }
            ArgItem::Args(inner) => collect_input_artifacts(inner, ignore, seen, out),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_quote_matches_buck2() {
        // Observed buck2 renderings (O5; conformance/cmd_args).
        assert_eq!(shell_quote("plain"), "plain");
        assert_eq!(shell_quote("two words"), "\"two words\"");
        assert_eq!(shell_quote("it's"), "\"it's\"");
        assert_eq!(shell_quote("$HOME"), "\"\\$HOME\"");
        assert_eq!(shell_quote("a\"b"), "\"a\\\"b\"");
        assert_eq!(shell_quote("semi;colon"), "\"semi;colon\"");
        assert_eq!(shell_quote(""), "\"\"");
        assert_eq!(shell_quote("pkg/src/in.txt"), "pkg/src/in.txt");
    }

    #[test]
    fn relative_paths() {
        assert_eq!(
            relative_path(
                "buck-out/v2/art/root/C/dep/__gen__/gen/dep_out.txt",
                "buck-out/v2/art/root/C/pkg/__paths__/local"
            ),
            "../../../dep/__gen__/gen/dep_out.txt"
        );
    }
}

starlark::methods_static!(CMD_ARGS_METHODS = cmd_args_methods);
