//! Analysis tests against buck2's observed behaviour (conformance/README.md O2, O4, O5, O7,
//! O8, O11: workspaces `write`, `cmd_args`, `providers`, `select`, `err_*`). Rules are
//! evaluated from .bzl snippets; targets are built directly.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use anyhow::Result;
use starlark::environment::{FrozenModule, Globals, GlobalsBuilder, LibraryExtension, Module};
use starlark::eval::Evaluator;
use starlark::syntax::{AstModule, Dialect, DialectTypes};

use super::analyzer::Analyzer;
use crate::model::TargetSource;
use crate::model::{
    ActionKind, AttrSpec, AttrType, CoercedAttr, DepKind, ProvidersLabel, RuleSpec, TargetLabel,
    TargetNode,
};

const CFG: &str = "1ef78538d8598cb2";

fn globals() -> Globals {
    GlobalsBuilder::extended_by(&[
        LibraryExtension::StructType,
        LibraryExtension::Json,
        LibraryExtension::Typing,
        LibraryExtension::Print,
    ])
    .with(super::register_globals)
    .build()
}

fn eval_bzl(src: &str) -> FrozenModule {
    let dialect = Dialect {
        enable_types: DialectTypes::Enable,
        enable_f_strings: true,
        enable_keyword_only_arguments: true,
        ..Dialect::Standard
    };
    let ast = AstModule::parse("root//rules:test.bzl", src.to_owned(), &dialect)
        .unwrap_or_else(|e| panic!("parse: {e}"));
    let g = globals();
    Module::with_temp_heap(|module| {
        {
            let mut eval = Evaluator::new(&module);
            eval.eval_module(ast, &g)
                .unwrap_or_else(|e| panic!("eval: {e}"));
        }
        module.freeze().expect("freeze")
    })
}

fn tl(s: &str) -> TargetLabel {
    let (cell, rest) = s.split_once("//").unwrap();
    let (package, name) = rest.split_once(':').unwrap();
    TargetLabel {
        cell: cell.to_owned(),
        package: package.to_owned(),
        name: name.to_owned(),
    }
}

fn pl(s: &str) -> ProvidersLabel {
    let (main, subs) = s.split_once('[').unwrap_or((s, ""));
    ProvidersLabel {
        target: tl(main),
        sub_target: subs
            .split('[')
            .filter(|x| !x.is_empty())
            .map(|x| x.trim_end_matches(']').to_owned())
            .collect(),
    }
}

fn dep(s: &str) -> CoercedAttr {
    CoercedAttr::Dep {
        label: pl(s),
        kind: DepKind::Normal,
    }
}

fn src(project_path: &str, rel: &str) -> CoercedAttr {
    CoercedAttr::SourceFile {
        project_path: project_path.to_owned(),
        package_relative: rel.to_owned(),
    }
}

#[derive(Default)]
struct Fixture {
    module: Option<FrozenModule>,
    nodes: HashMap<TargetLabel, Arc<TargetNode>>,
    platforms: HashMap<TargetLabel, TargetLabel>,
    config: HashMap<(String, String), String>,
}

impl TargetSource for Fixture {
    fn get_target(&self, label: &TargetLabel) -> Result<Arc<TargetNode>> {
        self.nodes.get(label).cloned().ok_or_else(|| {
            anyhow::anyhow!(
                "Unknown target `{}` from package `{}//{}`.",
                label.name,
                label.cell,
                label.package
            )
        })
    }

    fn target_platform(&self, label: &TargetLabel) -> Result<Option<TargetLabel>> {
        Ok(self.platforms.get(label).cloned())
    }

    fn config(&self, section: &str, key: &str) -> Option<String> {
        self.config
            .get(&(section.to_owned(), key.to_owned()))
            .cloned()
    }
}

impl Fixture {
    fn new(bzl: &str) -> Fixture {
        Fixture {
            module: Some(eval_bzl(bzl)),
            ..Default::default()
        }
    }

    fn rule(&self, impl_name: &str, attrs: &[(&str, AttrType)], toolchain: bool) -> Arc<RuleSpec> {
        self.rule_kind(impl_name, attrs, toolchain, false)
    }

    fn rule_kind(
        &self,
        impl_name: &str,
        attrs: &[(&str, AttrType)],
        toolchain: bool,
        configuration: bool,
    ) -> Arc<RuleSpec> {
        let m = self.module.as_ref().unwrap();
        Arc::new(RuleSpec {
            name: impl_name.to_owned(),
            defined_in: "root//rules:test.bzl".to_owned(),
            implementation: m.get(impl_name).expect("impl defined"),
            attrs: attrs
                .iter()
                .map(|(k, t)| {
                    (
                        (*k).to_owned(),
                        AttrSpec {
                            ty: t.clone(),
                            default: None,
                            default_only: false,
                            doc: String::new(),
                        },
                    )
                })
                .collect(),
            is_toolchain_rule: toolchain,
            is_configuration_rule: configuration,
            doc: String::new(),
        })
    }

    fn provider(&self, name: &str) -> starlark::values::OwnedFrozenValue {
        self.module
            .as_ref()
            .unwrap()
            .get(name)
            .expect("provider defined")
    }

    fn add(&mut self, label: &str, rule: &Arc<RuleSpec>, attrs: Vec<(&str, CoercedAttr)>) {
        let node = TargetNode {
            label: tl(label),
            rule: rule.clone(),
            attrs: attrs
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect::<BTreeMap<_, _>>(),
            visibility: vec!["PUBLIC".to_owned()],
            call_site: "BUCK:1:1".to_owned(),
        };
        self.nodes.insert(tl(label), Arc::new(node));
    }

    fn analyzer(self) -> Analyzer {
        Analyzer::with_source(Arc::new(self), "/proj".to_owned())
    }
}

/// The content every `write` action of `target` wrote, by output short path.
fn written(an: &Analyzer, target: &str) -> BTreeMap<String, String> {
    let t = tl(target);
    an.outputs(&pl(target)).expect("analysis succeeds");
    let mut out = BTreeMap::new();
    for a in an.action_graph().actions {
        if a.owner != t {
            continue;
        }
        if let ActionKind::Write { content, .. } = &a.kind {
            out.insert(
                a.identifier.clone().unwrap(),
                String::from_utf8(content.clone()).unwrap(),
            );
        }
    }
    out
}

fn error_of(an: &Analyzer, target: &str) -> String {
    match an.outputs(&pl(target)) {
        Ok(_) => panic!("analysis of {target} should fail"),
        Err(e) => format!("{e:#}"),
    }
}

const RENDER_BZL: &str = r##"
def _lines(ctx, name, args):
    out, _ = ctx.actions.write(name, args, allow_args = True)
    return out

def render_impl(ctx: AnalysisContext) -> list[Provider]:
    local = ctx.actions.declare_output("local/mine.txt")
    ctx.actions.write(local, "x")
    rel = ctx.actions.declare_output("rel")
    ctx.actions.write(rel, "r")
    outs = [
        _lines(ctx, "format", cmd_args("a", "b", format = "--flag={}")),
        _lines(ctx, "delim", cmd_args("a", "b", format = "<{}>", delimiter = ",")),
        _lines(ctx, "concat", cmd_args("x", "y", "z", delimiter = "")),
        _lines(ctx, "prepend", cmd_args("a", "b", prepend = "-I")),
        _lines(ctx, "nested", cmd_args("inner", cmd_args("deep", format = "[{}]"), format = "({})")),
        _lines(ctx, "nested_delim", cmd_args(cmd_args("j1", "j2", delimiter = "+"), "k")),
        _lines(ctx, "quote", cmd_args("plain", "two words", "it's", "$HOME", 'a"b', "semi;colon", "", ctx.attrs.src, quote = "shell")),
        _lines(ctx, "hidden", cmd_args("v", hidden = [ctx.attrs.top])),
        _lines(ctx, "regex", cmd_args("a-b-c", replace_regex = ("-", "_"))),
        _lines(ctx, "paths", cmd_args(ctx.attrs.src, ctx.attrs.top)),
        _lines(ctx, "top_parent", cmd_args(ctx.attrs.top, parent = 1)),
        _lines(ctx, "top_prefix", cmd_args(ctx.attrs.top, absolute_prefix = "$ROOT/")),
        _lines(ctx, "own_parent", cmd_args(local, parent = 1)),
        _lines(ctx, "own_parent2", cmd_args(local, parent = 2)),
        _lines(ctx, "rel_dep", cmd_args(ctx.attrs.dep[DefaultInfo].default_outputs[0], relative_to = rel)),
        _lines(ctx, "rel_src", cmd_args(ctx.attrs.src, relative_to = local)),
        _lines(ctx, "rel_src1", cmd_args(ctx.attrs.src, relative_to = (local, 1))),
        _lines(ctx, "ignore", cmd_args(ctx.attrs.src, ignore_artifacts = True)),
        _lines(ctx, "run_info", cmd_args(RunInfo(args = ["tool", ctx.attrs.src]), "--x")),
    ]
    return [DefaultInfo(default_outputs = outs)]

def gen_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.write("gen/dep_out.txt", "generated")
    return [DefaultInfo(default_output = out)]
"##;

fn render_fixture() -> Analyzer {
    let mut f = Fixture::new(RENDER_BZL);
    let render = f.rule(
        "render_impl",
        &[
            (
                "src",
                AttrType::Source {
                    allow_directory: false,
                },
            ),
            (
                "top",
                AttrType::Source {
                    allow_directory: false,
                },
            ),
            (
                "dep",
                AttrType::Dep {
                    kind: DepKind::Normal,
                    providers: vec![],
                },
            ),
        ],
        false,
    );
    let gen = f.rule("gen_impl", &[], false);
    f.add("root//dep:gen", &gen, vec![]);
    f.add(
        "root//pkg:paths",
        &render,
        vec![
            ("src", src("pkg/src/in.txt", "src/in.txt")),
            ("top", src("top.txt", "top.txt")),
            ("dep", dep("root//dep:gen")),
        ],
    );
    f.analyzer()
}

#[test]
fn cmd_args_rendering_matches_buck2() {
    let an = render_fixture();
    let w = written(&an, "root//pkg:paths");
    let art = format!("buck-out/forge/art/root/{CFG}");
    // O5 observed renderings.
    assert_eq!(w["format"], "--flag=a\n--flag=b");
    assert_eq!(w["delim"], "<a>,<b>");
    assert_eq!(w["concat"], "xyz");
    assert_eq!(w["prepend"], "-I\na\n-I\nb");
    assert_eq!(w["nested"], "(inner)\n([deep])");
    assert_eq!(w["nested_delim"], "j1+j2\nk");
    assert_eq!(
        w["quote"],
        "plain\n\"two words\"\n\"it's\"\n\"\\$HOME\"\n\"a\\\"b\"\n\"semi;colon\"\n\"\"\npkg/src/in.txt"
    );
    assert_eq!(w["hidden"], "v");
    assert_eq!(w["regex"], "a_b_c");
    assert_eq!(w["paths"], "pkg/src/in.txt\n./top.txt");
    assert_eq!(w["top_parent"], ".");
    assert_eq!(w["top_prefix"], "$ROOT/./top.txt");
    assert_eq!(w["own_parent"], format!("{art}/pkg/__paths__/local"));
    assert_eq!(w["own_parent2"], format!("{art}/pkg/__paths__"));
    assert_eq!(w["rel_dep"], "../../../dep/__gen__/gen/dep_out.txt");
    // The artifact counts as a directory: `local/mine.txt` has 9 components, as in buck2.
    assert_eq!(w["rel_src"], format!("{}pkg/src/in.txt", "../".repeat(9)));
    assert_eq!(w["rel_src1"], format!("{}pkg/src/in.txt", "../".repeat(8)));
    assert_eq!(w["ignore"], "pkg/src/in.txt");
    assert_eq!(w["run_info"], "tool\npkg/src/in.txt\n--x");
}

#[test]
fn output_layout_matches_buck2() {
    let an = render_fixture();
    let out = an.outputs(&pl("root//dep:gen")).unwrap();
    assert_eq!(
        out.default_outputs[0].path(),
        format!("buck-out/forge/art/root/{CFG}/dep/__gen__/gen/dep_out.txt")
    );
}

const WRITE_BZL: &str = r##"
def write_impl(ctx: AnalysisContext) -> list[Provider]:
    a = ctx.actions.write("verbatim.txt", "line1\nline2\n")
    b = ctx.actions.write("lines.txt", ["l1", "l2", "l3"])
    c, macros = ctx.actions.write("args.txt", cmd_args("x", ctx.attrs.top), allow_args = True)
    if macros != []:
        fail("macro files should be empty")
    content = {
        "zeta": 1,
        "alpha": [1, 2, True, None],
        "nested": struct(b = "é/x", a = (1, "two")),
        "path": ctx.attrs.top,
        "pkg_path": ctx.attrs.src,
        "cmd": cmd_args("--in", ctx.attrs.src),
        "empty_list": [],
        "empty_dict": {},
    }
    d = ctx.actions.write_json("compact.json", content)
    e = ctx.actions.write_json("pretty.json", {"k": [1, {"x": []}], "e": {}}, pretty = True)
    f = ctx.actions.write_json("with_inputs.json", {"p": ctx.attrs.src}, with_inputs = True)
    x = ctx.actions.write("exec.sh", "#!/bin/sh\n", is_executable = True)
    return [DefaultInfo(default_outputs = [a, b, c, d, e, x], other_outputs = [f])]
"##;

#[test]
fn write_and_write_json_bytes_match_buck2() {
    let mut f = Fixture::new(WRITE_BZL);
    let r = f.rule(
        "write_impl",
        &[
            (
                "src",
                AttrType::Source {
                    allow_directory: false,
                },
            ),
            (
                "top",
                AttrType::Source {
                    allow_directory: false,
                },
            ),
        ],
        false,
    );
    f.add(
        "root//:w",
        &r,
        vec![
            ("src", src("pkg/in.txt", "in.txt")),
            ("top", src("input.txt", "input.txt")),
        ],
    );
    let an = f.analyzer();
    let w = written(&an, "root//:w");
    assert_eq!(w["verbatim.txt"], "line1\nline2\n");
    assert_eq!(w["lines.txt"], "l1\nl2\nl3");
    assert_eq!(w["args.txt"], "x\n./input.txt");
    assert_eq!(
        w["compact.json"],
        r#"{"zeta":1,"alpha":[1,2,true,null],"nested":{"b":"é/x","a":[1,"two"]},"path":"./input.txt","pkg_path":"pkg/in.txt","cmd":["--in","pkg/in.txt"],"empty_list":[],"empty_dict":{}}"#
    );
    assert_eq!(
        w["pretty.json"],
        "{\n  \"k\": [\n    1,\n    {\n      \"x\": []\n    }\n  ],\n  \"e\": {}\n}\n"
    );
    let graph = an.action_graph();
    let exec = graph
        .actions
        .iter()
        .find(|a| a.identifier.as_deref() == Some("exec.sh"))
        .unwrap();
    assert!(matches!(
        exec.kind,
        ActionKind::Write {
            is_executable: true,
            ..
        }
    ));
    // with_inputs: the returned cmd_args renders to the JSON path and carries the source.
    let out = an.outputs(&pl("root//:w")).unwrap();
    let other: Vec<&str> = out.other_outputs.iter().map(|r| r.path()).collect();
    assert!(other.contains(&"pkg/in.txt"), "{other:?}");
    assert!(
        other.iter().any(|p| p.ends_with("/__w__/with_inputs.json")),
        "{other:?}"
    );
    assert_eq!(
        out.default_outputs[0].path(),
        format!("buck-out/forge/art/root/{CFG}/__w__/verbatim.txt")
    );
}

const ATTRS_BZL: &str = r##"
def attrs_impl(ctx: AnalysisContext) -> list[Provider]:
    local = ctx.actions.declare_output("local/mine.txt")
    tree = ctx.actions.declare_output("tree", dir = True)
    ctx.actions.run(cmd_args("mk", tree.as_output(), local.as_output()), category = "make_tree")
    p = tree.project("sub/b.txt")
    s = ctx.attrs.src
    l = ctx.label
    facts = {
        "src.short_path": s.short_path,
        "src.is_source": s.is_source,
        "src.owner": s.owner,
        "src.basename": s.basename,
        "src.extension": s.extension,
        "out.short_path": local.short_path,
        "out.owner": str(local.owner),
        "out.is_source": local.is_source,
        "out.extension": local.extension,
        "proj.short_path": p.short_path,
        "proj.basename": p.basename,
        "label.name": l.name,
        "label.package": l.package,
        "label.cell": l.cell,
        "label.path": str(l.path),
        "label.sub_target": l.sub_target,
        "label.str": str(l),
        "label.raw": str(l.raw_target()),
    }
    j = ctx.actions.write_json("facts.json", facts)
    return [DefaultInfo(default_outputs = [j, tree])]
"##;

#[test]
fn artifact_and_label_attributes_match_buck2() {
    let mut f = Fixture::new(ATTRS_BZL);
    let r = f.rule(
        "attrs_impl",
        &[(
            "src",
            AttrType::Source {
                allow_directory: false,
            },
        )],
        false,
    );
    f.add(
        "root//a/b:deep-name",
        &r,
        vec![("src", src("a/b/src/in.txt", "src/in.txt"))],
    );
    let an = f.analyzer();
    let w = written(&an, "root//a/b:deep-name");
    let facts: serde_json::Value = serde_json::from_str(&w["facts.json"]).unwrap();
    let expect = serde_json::json!({
        "src.short_path": "src/in.txt",
        "src.is_source": true,
        "src.owner": null,
        "src.basename": "in.txt",
        "src.extension": ".txt",
        "out.short_path": "local/mine.txt",
        "out.owner": "root//a/b:deep-name (<unspecified>)",
        "out.is_source": false,
        "out.extension": ".txt",
        "proj.short_path": "tree/sub/b.txt",
        "proj.basename": "b.txt",
        "label.name": "deep-name",
        "label.package": "a/b",
        "label.cell": "root",
        "label.path": "root//a/b",
        "label.sub_target": null,
        "label.str": "root//a/b:deep-name (<unspecified>)",
        "label.raw": "root//a/b:deep-name",
    });
    assert_eq!(facts, expect);
    let graph = an.action_graph();
    let run = graph
        .actions
        .iter()
        .find(|a| a.category == "make_tree")
        .unwrap();
    let art = format!("buck-out/forge/art/root/{CFG}/a/b/__deep-name__");
    match &run.kind {
        ActionKind::Run { argv, scratch, .. } => {
            assert_eq!(
                argv,
                &vec![
                    "mk".to_owned(),
                    format!("{art}/tree"),
                    format!("{art}/local/mine.txt")
                ]
            );
            assert!(scratch.starts_with("buck-out/forge/tmp/root/"), "{scratch}");
            assert!(scratch.ends_with("/make_tree"), "{scratch}");
        }
        k => panic!("unexpected {k:?}"),
    }
    assert!(run
        .outputs
        .iter()
        .any(|o| o.is_dir && o.path == format!("{art}/tree")));
    assert_eq!(graph.producers[&format!("{art}/tree")], run.id);
}

const PROVIDERS_BZL: &str = r##"
NeededInfo = provider(fields = ["value"])
TypedInfo = provider(fields = {"count": provider_field(int, default = 3), "name": provider_field(str)})
P = provider(fields = ["x"])

def plain_impl(ctx: AnalysisContext) -> list[Provider]:
    return [DefaultInfo()]

def giver_impl(ctx: AnalysisContext) -> list[Provider]:
    return [DefaultInfo(), NeededInfo(value = 7), TypedInfo(name = "n")]

def user_impl(ctx: AnalysisContext) -> list[Provider]:
    d = ctx.attrs.dep
    facts = {
        "value": d[NeededInfo].value,
        "count": d[TypedInfo].count,
        "has_default": d.get(DefaultInfo) != None,
        "missing": d.get(P) == None,
        "label": str(d.label),
    }
    infos: list[NeededInfo] = [d[NeededInfo]]
    return [DefaultInfo(default_output = ctx.actions.write_json("facts.json", facts)), P(x = len(infos))]

def no_default_impl(ctx: AnalysisContext) -> list[Provider]:
    return [P(x = 1)]

def unknown_field_impl(ctx: AnalysisContext) -> list[Provider]:
    return [DefaultInfo(), P(y = 1)]

def wrong_type_impl(ctx: AnalysisContext) -> list[Provider]:
    return [DefaultInfo(), TypedInfo(name = "n", count = "three")]

def missing_required_impl(ctx: AnalysisContext) -> list[Provider]:
    return [DefaultInfo(), TypedInfo(count = 1)]
"##;

fn providers_fixture() -> Fixture {
    let mut f = Fixture::new(PROVIDERS_BZL);
    let plain = f.rule("plain_impl", &[], false);
    let giver = f.rule("giver_impl", &[], false);
    let needed = f.provider("NeededInfo");
    let user = f.rule(
        "user_impl",
        &[(
            "dep",
            AttrType::Dep {
                kind: DepKind::Normal,
                providers: vec![needed],
            },
        )],
        false,
    );
    f.add("root//:plain", &plain, vec![]);
    f.add("root//:giver", &giver, vec![]);
    f.add(
        "root//:uses_giver",
        &user,
        vec![("dep", dep("root//:giver"))],
    );
    f.add(
        "root//:uses_plain",
        &user,
        vec![("dep", dep("root//:plain"))],
    );
    let nd = f.rule("no_default_impl", &[], false);
    f.add("root//:no_default", &nd, vec![]);
    let uf = f.rule("unknown_field_impl", &[], false);
    f.add("root//:unknown_field", &uf, vec![]);
    let wt = f.rule("wrong_type_impl", &[], false);
    f.add("root//:wrong_type", &wt, vec![]);
    let mr = f.rule("missing_required_impl", &[], false);
    f.add("root//:missing_required", &mr, vec![]);
    f
}

#[test]
fn providers_and_deps() {
    let an = providers_fixture().analyzer();
    let w = written(&an, "root//:uses_giver");
    let facts: serde_json::Value = serde_json::from_str(&w["facts.json"]).unwrap();
    assert_eq!(
        facts,
        serde_json::json!({
            "value": 7, "count": 3, "has_default": true, "missing": true,
            "label": "root//:giver (<unspecified>)"
        })
    );
}

#[test]
fn missing_provider_message_matches_buck2() {
    let an = providers_fixture().analyzer();
    let e = error_of(&an, "root//:uses_plain");
    assert!(
        e.starts_with("Error running analysis for `root//:uses_plain (<unspecified>)`"),
        "{e}"
    );
    assert!(
        e.contains("Attribute requires a dep that provides `NeededInfo`, but it was not found on `root//:plain (<unspecified>)`. Found these providers: DefaultInfo"),
        "{e}"
    );
}

#[test]
fn missing_default_info_message_matches_buck2() {
    let an = providers_fixture().analyzer();
    let e = error_of(&an, "root//:no_default");
    assert!(
        e.contains("collection [P(x=1)] did not receive a `DefaultInfo` provider"),
        "{e}"
    );
}

#[test]
fn provider_field_types_are_checked() {
    let an = providers_fixture().analyzer();
    let e = error_of(&an, "root//:wrong_type");
    assert!(
        e.contains("Value `\"three\"` of type `string` does not match the type annotation `int` for field `count` of `TypedInfo`"),
        "{e}"
    );
    let e = error_of(&an, "root//:missing_required");
    assert!(
        e.contains("Missing named-only parameter `name` for call to `TypedInfo`"),
        "{e}"
    );
}

#[test]
fn unknown_provider_field_is_rejected() {
    let an = providers_fixture().analyzer();
    let e = error_of(&an, "root//:unknown_field");
    assert!(
        e.contains("Found `y` extra named parameter(s) for call to P"),
        "{e}"
    );
}

const GRAPH_BZL: &str = r##"
def node_impl(ctx: AnalysisContext) -> list[Provider]:
    return [DefaultInfo()]

def sel_impl(ctx: AnalysisContext) -> list[Provider]:
    return [DefaultInfo()]

def tc_impl(ctx: AnalysisContext) -> list[Provider]:
    return [DefaultInfo()]

def subs_impl(ctx: AnalysisContext) -> list[Provider]:
    index = ctx.actions.write("index.html", "<html/>")
    return [DefaultInfo(sub_targets = {
        "docs": [DefaultInfo(default_outputs = [], sub_targets = {"index": [DefaultInfo(default_output = index)]})],
    })]

def bad_actions_impl(ctx: AnalysisContext) -> list[Provider]:
    kind = ctx.attrs.kind
    a = ctx.actions.declare_output("a")
    b = ctx.actions.declare_output("b")
    if kind == "dup_singleton":
        ctx.actions.run(["x", a.as_output()], category = "step")
        ctx.actions.run(["x", b.as_output()], category = "step")
    elif kind == "dup_identifier":
        ctx.actions.run(["x", a.as_output()], category = "step", identifier = "i")
        ctx.actions.run(["x", b.as_output()], category = "step", identifier = "i")
    elif kind == "bad_category":
        ctx.actions.run(["x", a.as_output()], category = "BadCategory")
    elif kind == "no_outputs":
        ctx.actions.run(["x", a], category = "step")
    elif kind == "unbound":
        ctx.actions.run(["x", a.as_output()], category = "step")
    elif kind == "source_output":
        ctx.attrs.src.as_output()
    elif kind == "double_bind":
        ctx.actions.run(["x", a.as_output()], category = "one")
        ctx.actions.run(["x", a.as_output(), b.as_output()], category = "two")
    elif kind == "dynamic":
        ctx.actions.dynamic_output(dynamic = [], inputs = [], outputs = [], f = None)
    return [DefaultInfo()]
"##;

fn graph_fixture() -> Fixture {
    let mut f = Fixture::new(GRAPH_BZL);
    let node = f.rule(
        "node_impl",
        &[(
            "deps",
            AttrType::List(Box::new(AttrType::Dep {
                kind: DepKind::Normal,
                providers: vec![],
            })),
        )],
        false,
    );
    f.add(
        "root//:a",
        &node,
        vec![("deps", CoercedAttr::List(vec![dep("root//:b")]))],
    );
    f.add(
        "root//:b",
        &node,
        vec![("deps", CoercedAttr::List(vec![dep("root//:c")]))],
    );
    f.add(
        "root//:c",
        &node,
        vec![("deps", CoercedAttr::List(vec![dep("root//:a")]))],
    );
    f.add(
        "root//app:app",
        &node,
        vec![(
            "deps",
            CoercedAttr::List(vec![dep("root//lib:does_not_exist")]),
        )],
    );
    let sel = f.rule("sel_impl", &[("v", AttrType::String)], false);
    f.add(
        "root//:t",
        &sel,
        vec![(
            "v",
            CoercedAttr::Select(vec![(
                "DEFAULT".to_owned(),
                CoercedAttr::String("d".to_owned()),
            )]),
        )],
    );
    let tc = f.rule("tc_impl", &[], true);
    f.add("toolchains//:greeter", &tc, vec![]);
    let uses_tc = f.rule(
        "node_impl",
        &[(
            "tc",
            AttrType::Dep {
                kind: DepKind::Toolchain,
                providers: vec![],
            },
        )],
        false,
    );
    f.add(
        "root//:with_tc",
        &uses_tc,
        vec![(
            "tc",
            CoercedAttr::Dep {
                label: pl("toolchains//:greeter"),
                kind: DepKind::Toolchain,
            },
        )],
    );
    f.add(
        "root//:tc_not_toolchain",
        &uses_tc,
        vec![(
            "tc",
            CoercedAttr::Dep {
                label: pl("root//:c2"),
                kind: DepKind::Toolchain,
            },
        )],
    );
    f.add(
        "root//:c2",
        &node,
        vec![("deps", CoercedAttr::List(vec![]))],
    );
    f.add(
        "root//:plain_dep_on_tc",
        &node,
        vec![("deps", CoercedAttr::List(vec![dep("toolchains//:greeter")]))],
    );
    let subs = f.rule("subs_impl", &[], false);
    f.add("root//lib:greet", &subs, vec![]);
    let bad = f.rule(
        "bad_actions_impl",
        &[
            ("kind", AttrType::String),
            (
                "src",
                AttrType::Source {
                    allow_directory: false,
                },
            ),
        ],
        false,
    );
    for kind in [
        "dup_singleton",
        "dup_identifier",
        "bad_category",
        "no_outputs",
        "unbound",
        "source_output",
        "double_bind",
        "dynamic",
    ] {
        f.add(
            &format!("root//bad:{kind}"),
            &bad,
            vec![
                ("kind", CoercedAttr::String(kind.to_owned())),
                ("src", src("bad/x.txt", "x.txt")),
            ],
        );
    }
    f
}

#[test]
fn cycle_message_matches_buck2() {
    let an = graph_fixture().analyzer();
    let e = error_of(&an, "root//:a");
    assert!(
        e.starts_with("Error running analysis for `root//:a (<unspecified>)`"),
        "{e}"
    );
    assert!(
        e.contains(
            "Configured target cycle detected (`->` means \"depends on\"):\n  root//:a (<unspecified>) ->\n  root//:b (<unspecified>) ->\n  root//:c (<unspecified>) ->\n  root//:a (<unspecified>)"
        ),
        "{e}"
    );
    // Nothing of the cycle stays half-analysed: asking again gives the same error.
    assert_eq!(error_of(&an, "root//:a"), e);
}

#[test]
fn missing_dep_names_the_dependent() {
    let an = graph_fixture().analyzer();
    let e = error_of(&an, "root//app:app");
    assert!(
        e.starts_with("Error running analysis for `root//app:app (<unspecified>)`"),
        "{e}"
    );
    assert!(e.contains("-> root//lib:does_not_exist"), "{e}");
    assert!(
        e.contains("Unknown target `does_not_exist` from package `root//lib`."),
        "{e}"
    );
}

#[test]
fn select_with_only_default_resolves_on_the_unspecified_platform() {
    // buck2 0676d75903 (conformance/err_select_unspecified): only a key with constraints
    // needs the platform's configuration data.
    let an = graph_fixture().analyzer();
    assert!(an.outputs(&pl("root//:t")).is_ok());
}

#[test]
fn toolchain_edges_are_checked() {
    let an = graph_fixture().analyzer();
    assert!(an.outputs(&pl("root//:with_tc")).is_ok());
    let e = error_of(&an, "root//:tc_not_toolchain");
    assert!(
        e.contains("Target `root//:c2` was used as a toolchain_dep, but is not a toolchain rule"),
        "{e}"
    );
    let e = error_of(&an, "root//:plain_dep_on_tc");
    assert!(e.contains("Target `toolchains//:greeter` was used not as a toolchain_dep, but is a toolchain rule"), "{e}");
}

#[test]
fn nested_sub_targets() {
    let an = graph_fixture().analyzer();
    let out = an.outputs(&pl("root//lib:greet[docs][index]")).unwrap();
    assert_eq!(
        out.default_outputs[0].path(),
        format!("buck-out/forge/art/root/{CFG}/lib/__greet__/index.html")
    );
    assert!(an
        .outputs(&pl("root//lib:greet[docs]"))
        .unwrap()
        .default_outputs
        .is_empty());
    let e = format!(
        "{:#}",
        an.outputs(&pl("root//lib:greet[nope]")).unwrap_err()
    );
    assert!(e.contains("requested sub target named `nope` of target `root//lib:greet (<unspecified>)` is not available"), "{e}");
}

#[test]
fn action_registration_errors() {
    let an = graph_fixture().analyzer();
    let cases = [
        (
            "dup_singleton",
            "Multiple actions registered under category `step`",
        ),
        (
            "dup_identifier",
            "Action category `step` contains duplicate identifier `i`",
        ),
        ("bad_category", "Action category `BadCategory` is invalid"),
        ("no_outputs", "does not declare any outputs"),
        (
            "unbound",
            "Artifact `b` was declared but no action produces it",
        ),
        (
            "source_output",
            "Source artifact `bad/x.txt` cannot be bound",
        ),
        ("double_bind", "Artifact `a` is already bound"),
        (
            "dynamic",
            "`ctx.actions.dynamic_output` is not supported by forge yet",
        ),
    ];
    for (kind, msg) in cases {
        let e = error_of(&an, &format!("root//bad:{kind}"));
        assert!(e.contains(msg), "{kind}: {e}");
        assert!(
            e.starts_with(&format!(
                "Error running analysis for `root//bad:{kind} (<unspecified>)`"
            )),
            "{e}"
        );
    }
}

const RUN_BZL: &str = r##"
def bin_impl(ctx: AnalysisContext) -> list[Provider]:
    script = ctx.actions.write("hello.sh", "#!/bin/sh\necho hi\n", is_executable = True)
    return [
        DefaultInfo(default_output = script),
        RunInfo(args = cmd_args(script, ctx.attrs.data, "two words")),
    ]

def test_impl(ctx: AnalysisContext) -> list[Provider]:
    return [
        DefaultInfo(),
        ExternalRunnerTestInfo(
            type = "custom",
            command = [ctx.attrs.tool[RunInfo], ctx.attrs.data],
            env = {"TEST_GREETING": "hello", "DATA": ctx.attrs.data},
            labels = ["unit"],
        ),
    ]

def arg_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.declare_output("arg.txt")
    ctx.actions.run(cmd_args(ctx.attrs.arg, out.as_output()), category = "use_arg", env = {"TOOL": ctx.attrs.arg})
    return [DefaultInfo(default_output = out)]
"##;

#[test]
fn run_and_test_outputs() {
    let mut f = Fixture::new(RUN_BZL);
    let bin = f.rule(
        "bin_impl",
        &[(
            "data",
            AttrType::Source {
                allow_directory: false,
            },
        )],
        false,
    );
    f.add(
        "root//tools:hello",
        &bin,
        vec![("data", src("tools/data.txt", "data.txt"))],
    );
    let test = f.rule(
        "test_impl",
        &[
            (
                "tool",
                AttrType::Dep {
                    kind: DepKind::Normal,
                    providers: vec![],
                },
            ),
            (
                "data",
                AttrType::Source {
                    allow_directory: false,
                },
            ),
        ],
        false,
    );
    f.add(
        "root//tests:env_check",
        &test,
        vec![
            ("tool", dep("root//tools:hello")),
            ("data", src("tests/fixture.txt", "fixture.txt")),
        ],
    );
    let arg = f.rule("arg_impl", &[("arg", AttrType::Arg)], false);
    f.add(
        "root//tools:use_arg",
        &arg,
        vec![(
            "arg",
            CoercedAttr::Arg {
                raw: "--tool=$(location :hello) --x $(exe //tools:hello)".to_owned(),
                macro_deps: vec![pl("root//tools:hello")],
            },
        )],
    );
    let an = f.analyzer();
    let art = format!("buck-out/forge/art/root/{CFG}/tools/__hello__/hello.sh");
    let run = an.outputs(&pl("root//tools:hello")).unwrap().run.unwrap();
    assert_eq!(
        run.argv,
        vec![
            art.clone(),
            "tools/data.txt".to_owned(),
            "two words".to_owned()
        ]
    );
    assert_eq!(
        run.argv_absolute,
        vec![
            format!("/proj/{art}"),
            "/proj/tools/data.txt".to_owned(),
            "two words".to_owned()
        ]
    );
    assert_eq!(run.inputs.len(), 2);
    let t = an
        .outputs(&pl("root//tests:env_check"))
        .unwrap()
        .test
        .unwrap();
    assert_eq!(t.test_type, "custom");
    assert_eq!(
        t.command.argv,
        vec![
            art.clone(),
            "tools/data.txt".to_owned(),
            "two words".to_owned(),
            "tests/fixture.txt".to_owned()
        ]
    );
    assert_eq!(
        t.command.env,
        vec![
            ("TEST_GREETING".to_owned(), "hello".to_owned()),
            ("DATA".to_owned(), "tests/fixture.txt".to_owned())
        ]
    );
    assert_eq!(t.labels, vec!["unit".to_owned()]);
    an.outputs(&pl("root//tools:use_arg")).unwrap();
    let g = an.action_graph();
    let a = g.actions.iter().find(|a| a.category == "use_arg").unwrap();
    match &a.kind {
        ActionKind::Run { argv, env, .. } => {
            assert_eq!(
                argv[0],
                format!("--tool={art} --x {art} tools/data.txt two words")
            );
            assert_eq!(env, &vec![("TOOL".to_owned(), argv[0].clone())]);
        }
        k => panic!("{k:?}"),
    }
    assert!(a.inputs.iter().any(|i| i.path() == art));
}

const CONFIG_BZL: &str = r##"
def constraint_setting_impl(ctx: AnalysisContext) -> list[Provider]:
    return [DefaultInfo(), ConstraintSettingInfo(label = ctx.label.raw_target())]

def constraint_value_impl(ctx: AnalysisContext) -> list[Provider]:
    cv = ConstraintValueInfo(setting = ctx.attrs.setting[ConstraintSettingInfo], label = ctx.label.raw_target())
    return [DefaultInfo(), cv, ConfigurationInfo(constraints = {cv.setting.label: cv}, values = {})]

def config_setting_impl(ctx: AnalysisContext) -> list[Provider]:
    return [DefaultInfo(), ConfigurationInfo(constraints = {}, values = ctx.attrs.values)]

def platform_impl(ctx: AnalysisContext) -> list[Provider]:
    constraints = {}
    for c in ctx.attrs.constraints:
        cv = c[ConstraintValueInfo]
        constraints[cv.setting.label] = cv
    return [
        DefaultInfo(),
        PlatformInfo(label = str(ctx.label.raw_target()), configuration = ConfigurationInfo(constraints = constraints, values = {})),
    ]

def pick_impl(ctx: AnalysisContext) -> list[Provider]:
    out = ctx.actions.write("v.txt", ctx.attrs.v + "|" + str(ctx.label))
    return [DefaultInfo(default_output = out)]
"##;

fn sel(branches: &[(&str, &str)]) -> CoercedAttr {
    CoercedAttr::Select(
        branches
            .iter()
            .map(|(k, v)| ((*k).to_owned(), CoercedAttr::String((*v).to_owned())))
            .collect(),
    )
}

#[test]
// One fixture walked through every select() case in turn; split, each part would rebuild it.
#[allow(clippy::too_many_lines)]
fn select_resolves_under_a_platform() {
    let mut f = Fixture::new(CONFIG_BZL);
    let dep_ty = || AttrType::Dep {
        kind: DepKind::Normal,
        providers: vec![],
    };
    let setting = f.rule_kind("constraint_setting_impl", &[], false, true);
    let value = f.rule_kind(
        "constraint_value_impl",
        &[("setting", dep_ty())],
        false,
        true,
    );
    let cfg_setting = f.rule_kind(
        "config_setting_impl",
        &[(
            "values",
            AttrType::Dict {
                key: Box::new(AttrType::String),
                value: Box::new(AttrType::String),
                sorted: false,
            },
        )],
        false,
        true,
    );
    let platform = f.rule_kind(
        "platform_impl",
        &[("constraints", AttrType::List(Box::new(dep_ty())))],
        false,
        true,
    );
    let pick = f.rule(
        "pick_impl",
        &[
            ("v", AttrType::String),
            ("deps", AttrType::List(Box::new(dep_ty()))),
        ],
        false,
    );
    f.add("root//config:speed", &setting, vec![]);
    f.add(
        "root//config:fast",
        &value,
        vec![("setting", dep("root//config:speed"))],
    );
    f.add(
        "root//config:slow",
        &value,
        vec![("setting", dep("root//config:speed"))],
    );
    f.add(
        "root//config:fast_platform",
        &platform,
        vec![(
            "constraints",
            CoercedAttr::List(vec![dep("root//config:fast")]),
        )],
    );
    f.add(
        "root//config:empty_platform",
        &platform,
        vec![("constraints", CoercedAttr::List(vec![]))],
    );
    f.add(
        "root//config:mode_debug",
        &cfg_setting,
        vec![(
            "values",
            CoercedAttr::Dict(vec![(
                CoercedAttr::String("build.mode".to_owned()),
                CoercedAttr::String("debug".to_owned()),
            )]),
        )],
    );
    let speed = sel(&[
        ("root//config:fast", "F"),
        ("root//config:slow", "S"),
        ("DEFAULT", "D"),
    ]);
    let none = CoercedAttr::List(vec![]);
    f.add(
        "root//:on_fast",
        &pick,
        vec![
            ("v", speed.clone()),
            ("deps", CoercedAttr::List(vec![dep("root//:child")])),
        ],
    );
    f.add(
        "root//:child",
        &pick,
        vec![("v", speed.clone()), ("deps", none.clone())],
    );
    f.add(
        "root//:on_empty",
        &pick,
        vec![("v", speed.clone()), ("deps", none.clone())],
    );
    f.add(
        "root//:by_config",
        &pick,
        vec![
            (
                "v",
                sel(&[("root//config:mode_debug", "dbg"), ("DEFAULT", "rel")]),
            ),
            ("deps", none.clone()),
        ],
    );
    f.add(
        "root//:no_default",
        &pick,
        vec![("v", sel(&[("root//config:slow", "S")])), ("deps", none)],
    );
    for t in ["root//:on_fast", "root//:no_default"] {
        f.platforms.insert(tl(t), tl("root//config:fast_platform"));
    }
    for t in ["root//:on_empty", "root//:by_config"] {
        f.platforms.insert(tl(t), tl("root//config:empty_platform"));
    }
    f.config
        .insert(("build".to_owned(), "mode".to_owned()), "debug".to_owned());
    let an = f.analyzer();
    let fast = an.outputs(&pl("root//:on_fast")).unwrap();
    let path = fast.default_outputs[0].path().to_owned();
    let hash = path.split('/').nth(4).unwrap().to_owned();
    assert_eq!(hash.len(), 16);
    assert_ne!(hash, CFG, "each platform gets its own hash");
    assert_eq!(
        path,
        format!("buck-out/forge/art/root/{hash}/__on_fast__/v.txt")
    );
    let content = |target: &str| {
        let t = tl(target);
        an.action_graph()
            .actions
            .iter()
            .find_map(|a| match &a.kind {
                ActionKind::Write { content, .. } if a.owner == t => {
                    Some(String::from_utf8(content.clone()).unwrap())
                }
                _ => None,
            })
            .unwrap()
    };
    // O7/O8: the label shows the platform and its hash.
    assert_eq!(
        content("root//:on_fast"),
        format!("F|root//:on_fast (root//config:fast_platform#{hash})")
    );
    // Deps inherit the dependent's platform.
    assert_eq!(
        content("root//:child"),
        format!("F|root//:child (root//config:fast_platform#{hash})")
    );
    an.outputs(&pl("root//:on_empty")).unwrap();
    assert!(
        content("root//:on_empty").starts_with("D|root//:on_empty (root//config:empty_platform#")
    );
    an.outputs(&pl("root//:by_config")).unwrap();
    assert!(content("root//:by_config").starts_with("dbg|"));
    let e = error_of(&an, "root//:no_default");
    assert!(
        e.contains("None of 1 conditions matched configuration `root//config:fast_platform#"),
        "{e}"
    );
}
