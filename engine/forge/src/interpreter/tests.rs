//! Loading tests on small temporary workspaces. Expected texts and values are buck2's
//! observed behaviour (conformance/README.md O6, O7, O11: workspaces `glob`, `buckconfig`,
//! `cells_load`, `attrs`, `err_*`), not this code's output.

use std::sync::Arc;

use super::config::ConfigOverride;
use super::query::QueryEnv;
use super::{Loader, Workspace};
use crate::model::{CoercedAttr, TargetLabel};

const CONFIG: &str = "[cells]\n  root = .\n  prelude = prelude\n  toolchains = toolchains\n  extra = third_party/extra\n[buildfile]\n  name = BUCK\n";

const RULES: &str = r#"
def _impl(ctx: AnalysisContext) -> list[Provider]:
    return [DefaultInfo()]

text = rule(impl = _impl, attrs = {
    "msg": attrs.string(default = "hi"),
    "count": attrs.int(default = 1),
    "deps": attrs.list(attrs.dep(), default = []),
    "srcs": attrs.list(attrs.source(), default = []),
    "mode": attrs.enum(["fast", "slow"], default = "fast"),
    "pair": attrs.tuple(attrs.string(), attrs.int(), default = ("a", 1)),
    "table": attrs.dict(attrs.string(), attrs.int(), sorted = True, default = {}),
    "either": attrs.one_of(attrs.int(), attrs.string(), default = 0),
    "maybe": attrs.option(attrs.string(), default = None),
    "tool": attrs.option(attrs.exec_dep(), default = None),
})
"#;

struct Ws {
    _dir: tempfile::TempDir,
    loader: Loader,
}

fn workspace(files: &[(&str, &str)], overrides: &[&str]) -> Ws {
    let dir = tempfile::tempdir().unwrap();
    let mut all: Vec<(&str, &str)> = vec![
        (".buckroot", ""),
        (".buckconfig", CONFIG),
        ("prelude/prelude.bzl", ""),
        ("rules/text.bzl", RULES),
    ];
    all.extend_from_slice(files);
    for (path, text) in all {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let overrides: Vec<ConfigOverride> = overrides
        .iter()
        .map(|o| ConfigOverride::parse(o).unwrap())
        .collect();
    let ws = Workspace::open(dir.path(), &overrides).unwrap();
    let loader = Loader::new(Arc::new(ws), crate::analysis::register_globals).unwrap();
    Ws { _dir: dir, loader }
}

fn label(s: &str) -> TargetLabel {
    let (cell, rest) = s.split_once("//").unwrap();
    let (package, name) = rest.split_once(':').unwrap();
    TargetLabel {
        cell: cell.into(),
        package: package.into(),
        name: name.into(),
    }
}

fn attr(w: &Ws, target: &str, name: &str) -> CoercedAttr {
    w.loader.get_target(&label(target)).unwrap().attrs[name].clone()
}

fn error(w: &Ws, cell: &str, package: &str) -> String {
    let e = w.loader.load_package(cell, package).unwrap_err();
    format!("{e:?}")
}

fn s(x: &str) -> CoercedAttr {
    CoercedAttr::String(x.into())
}

#[test]
fn load_forms_and_cells() {
    let w = workspace(
        &[
            ("pkg/local.bzl", "LOCAL = 'local'\n"),
            ("toolchains/defs.bzl", "TC = 'tc'\n"),
            (
                "toolchains/BUCK",
                "load(\"@root//rules:text.bzl\", \"text\")\ntext(name = \"tc\")\n",
            ),
            ("third_party/extra/e.bzl", "E = 'extra'\n"),
            (
                "pkg/BUCK",
                "load(\":local.bzl\", \"LOCAL\")\n\
                 load(\"//rules:text.bzl\", \"text\")\n\
                 load(\"@root//rules:text.bzl\", text2 = \"text\")\n\
                 load(\"@toolchains//:defs.bzl\", \"TC\")\n\
                 load(\"@toolchains//defs.bzl\", TC2 = \"TC\")\n\
                 load(\"@extra//:e.bzl\", \"E\")\n\
                 text(name = \"a\", msg = LOCAL + TC + TC2 + E)\n\
                 text2(name = \"b\")\n",
            ),
        ],
        &[],
    );
    assert_eq!(attr(&w, "root//pkg:a", "msg"), s("localtctcextra"));
    // `//rules:...` and `@root//rules:...` are the same module, hence the same rule.
    let a = w.loader.get_target(&label("root//pkg:a")).unwrap();
    let b = w.loader.get_target(&label("root//pkg:b")).unwrap();
    assert!(Arc::ptr_eq(&a.rule, &b.rule));
    assert_eq!(a.rule.name, "text");
    assert_eq!(a.rule.defined_in, "root//rules/text.bzl");
    assert!(w.loader.get_target(&label("toolchains//:tc")).is_ok());
}

#[test]
fn load_errors() {
    let w = workspace(
        &[
            ("missing/BUCK", "load(\"//rules:text.bzl\", \"text\")\nload(\"//rules:does_not_exist.bzl\", \"x\")\n"),
            ("noat/BUCK", "load(\"toolchains//:defs.bzl\", \"x\")\n"),
            ("toolchains/defs.bzl", "X = 1\n"),
            ("wrongcell/BUCK", "load(\"//toolchains:defs.bzl\", \"X\")\n"),
            ("cycle/a.bzl", "load(\":b.bzl\", \"B\")\nA = 1\n"),
            ("cycle/b.bzl", "load(\":a.bzl\", \"A\")\nB = 1\n"),
            ("cycle/BUCK", "load(\":a.bzl\", \"A\")\n"),
        ],
        &[],
    );
    // buck2 0676d75903: a failed load is reported as `From load at` alone (see
    // conformance/err_missing_load), without "Error evaluating build file".
    let e = error(&w, "root", "missing");
    assert!(e.starts_with("From load at missing/BUCK:2"), "{e}");
    assert!(
        e.contains("File not found: root//rules/does_not_exist.bzl"),
        "{e}"
    );
    let e = error(&w, "root", "noat");
    assert!(e.contains("@toolchains//:defs.bzl"), "{e}");
    let e = error(&w, "root", "wrongcell");
    assert!(e.contains("belongs to cell `toolchains`"), "{e}");
    let e = error(&w, "root", "cycle");
    assert!(
        e.contains(
            "Load cycle detected: root//cycle/a.bzl -> root//cycle/b.bzl -> root//cycle/a.bzl"
        ),
        "{e}"
    );
}

#[test]
fn dialects() {
    let w = workspace(
        &[
            ("d/BUCK", "def f():\n    pass\n"),
            ("f/BUCK", "load(\"//rules:text.bzl\", \"text\")\nx = 1\ntext(name = f\"t{x}\")\n"),
            ("t/defs.bzl", "def g(x: int) -> str:\n    return str(x)\n"),
            ("t/BUCK", "load(\":defs.bzl\", \"g\")\nload(\"//rules:text.bzl\", \"text\")\ntext(name = g(7))\n"),
        ],
        &[],
    );
    let e = error(&w, "root", "d");
    assert!(e.contains("`def` is not allowed"), "{e}");
    assert!(w.loader.get_target(&label("root//f:t1")).is_ok());
    assert!(w.loader.get_target(&label("root//t:7")).is_ok());
}

#[test]
fn prelude_symbols_are_global() {
    let w = workspace(
        &[
            (
                "prelude/prelude.bzl",
                "def where(name):\n    return package_name() + \"/\" + get_cell_name() + \"/\" + name\n\
                 _hidden = 1\nPUBLIC = \"pub\"\nnative = struct(from_native = \"n\")\n",
            ),
            ("rules/uses.bzl", "USES = PUBLIC + \"!\"\n"),
            (
                "a/b/BUCK",
                "load(\"//rules:text.bzl\", \"text\")\nload(\"//rules:uses.bzl\", \"USES\")\n\
                 text(name = \"t\", msg = where(\"x\") + USES + from_native)\n",
            ),
            ("h/BUCK", "x = _hidden\n"),
        ],
        &[],
    );
    assert_eq!(attr(&w, "root//a/b:t", "msg"), s("a/b/root/xpub!n"));
    let e = error(&w, "root", "h");
    assert!(e.contains("_hidden"), "{e}");
}

#[test]
fn coercion_semantics() {
    let w = workspace(
        &[
            ("lib/BUCK", "load(\"//rules:text.bzl\", \"text\")\ntext(name = \"lib\")\n"),
            ("p/a.txt", "a"),
            ("p/sub/b.txt", "b"),
            (
                "p/BUCK",
                "load(\"//rules:text.bzl\", \"text\")\n\
                 text(name = \"t\", mode = \"SLOW\", pair = [\"x\", 2], table = {\"b\": 2, \"a\": 1},\n\
                      either = \"str\", msg = None, deps = [\":u\", \"//lib:lib\"],\n\
                      srcs = [\"a.txt\", \"sub/b.txt\", \":u\"], tool = \"//lib:lib\")\n\
                 text(name = \"u\", either = 5, deps = [\"//lib:lib\"] + select({\"//cfg:x\": [\":t\"], \"DEFAULT\": []}))\n",
            ),
        ],
        &[],
    );
    assert_eq!(attr(&w, "root//p:t", "mode"), s("slow"));
    assert_eq!(
        attr(&w, "root//p:t", "pair"),
        CoercedAttr::Tuple(vec![s("x"), CoercedAttr::Int(2)])
    );
    assert_eq!(
        attr(&w, "root//p:t", "table"),
        CoercedAttr::Dict(vec![
            (s("a"), CoercedAttr::Int(1)),
            (s("b"), CoercedAttr::Int(2))
        ])
    );
    assert_eq!(attr(&w, "root//p:t", "either"), s("str"));
    assert_eq!(attr(&w, "root//p:u", "either"), CoercedAttr::Int(5));
    // `None` selects the default; `attrs.option(x, default = None)` defaults to None.
    assert_eq!(attr(&w, "root//p:t", "msg"), s("hi"));
    assert_eq!(attr(&w, "root//p:t", "maybe"), CoercedAttr::None);
    let t = w.loader.get_target(&label("root//p:t")).unwrap();
    let deps: Vec<String> = t.deps().iter().map(|(l, _)| l.to_string()).collect();
    assert_eq!(deps, vec!["root//p:u", "root//lib:lib"]);
    match attr(&w, "root//p:t", "srcs") {
        CoercedAttr::List(xs) => {
            assert_eq!(
                xs[1],
                CoercedAttr::SourceFile {
                    project_path: "p/sub/b.txt".into(),
                    package_relative: "sub/b.txt".into()
                }
            );
            assert!(matches!(&xs[2], CoercedAttr::SourceDep(l) if l.to_string() == "root//p:u"));
        }
        other => panic!("{other:?}"),
    }
    match attr(&w, "root//p:u", "deps") {
        CoercedAttr::Concat(parts) => {
            assert_eq!(parts.len(), 2);
            match &parts[1] {
                CoercedAttr::Select(branches) => {
                    assert_eq!(branches[0].0, "root//cfg:x");
                    assert_eq!(branches[1].0, "DEFAULT");
                }
                other => panic!("{other:?}"),
            }
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn coercion_errors_use_buck2_texts() {
    let w = workspace(
        &[
            ("x/a.txt", ""),
            ("extra/BUCK", "load(\"//rules:text.bzl\", \"text\")\ntext(name = \"t\", colour = \"red\")\n"),
            ("int/BUCK", "load(\"//rules:text.bzl\", \"text\")\n\ntext(\n    name = \"t\",\n    count = \"three\",\n)\n"),
            ("esc/BUCK", "load(\"//rules:text.bzl\", \"text\")\ntext(name = \"t\", srcs = [\"../x/a.txt\"])\n"),
            ("gone/BUCK", "load(\"//rules:text.bzl\", \"text\")\ntext(name = \"t\", srcs = [\"nope.txt\"])\n"),
            ("dup/BUCK", "load(\"//rules:text.bzl\", \"text\")\ntext(name = \"t\")\ntext(name = \"t\")\n"),
            ("enum/BUCK", "load(\"//rules:text.bzl\", \"text\")\ntext(name = \"t\", mode = \"medium\")\n"),
            ("noname/BUCK", "load(\"//rules:text.bzl\", \"text\")\ntext(msg = \"x\")\n"),
            ("outer/BUCK", "load(\"//rules:text.bzl\", \"text\")\ntext(name = \"t\", srcs = [\"inner/f.txt\"])\n"),
            ("outer/inner/BUCK", ""),
            ("outer/inner/f.txt", ""),
        ],
        &[],
    );
    let e = error(&w, "root", "extra");
    assert!(
        e.contains("Found `colour` extra named parameter(s) for call to text"),
        "{e}"
    );
    assert!(e.contains("extra/BUCK:2:1"), "{e}");
    let e = error(&w, "root", "int");
    assert!(
        e.contains("Error coercing attribute `count` of `root//int:t`"),
        "{e}"
    );
    assert!(
        e.contains("Expected `int`, but got `string (repr: \"three\")`"),
        "{e}"
    );
    assert!(e.contains("int/BUCK:3:1"), "{e}");
    let e = error(&w, "root", "esc");
    assert!(e.contains("../x/a.txt") && e.contains("esc/BUCK:2"), "{e}");
    let e = error(&w, "root", "gone");
    assert!(e.contains("nope.txt"), "{e}");
    let e = error(&w, "root", "dup");
    assert!(e.contains("root//dup:t") && e.contains("twice"), "{e}");
    let e = error(&w, "root", "enum");
    assert!(e.contains("medium"), "{e}");
    let e = error(&w, "root", "outer");
    assert!(
        e.contains("inner/f.txt") && e.contains("nested package in `outer/inner`"),
        "{e}"
    );
    let e = error(&w, "root", "noname");
    assert!(e.contains("`name`"), "{e}");
}

#[test]
fn read_config_precedence() {
    let w = workspace(
        &[
            (
                ".buckconfig.local",
                "[s]\n  local = from_local\n  both = local\n",
            ),
            (
                "c/BUCK",
                "load(\"//rules:text.bzl\", \"text\")\n\
                 text(name = \"both\", msg = read_config(\"s\", \"both\"))\n\
                 text(name = \"cli\", msg = read_config(\"s\", \"cli\"))\n\
                 text(name = \"unset\", msg = read_config(\"buildfile\", \"name\", \"default\"))\n\
                 text(name = \"none\", msg = str(read_config(\"s\", \"absent\")))\n\
                 text(name = \"case\", msg = str(read_config(\"BUILDFILE\", \"name\")))\n\
                 text(name = \"root\", msg = read_root_config(\"s\", \"local\"))\n",
            ),
        ],
        &["s.cli=from_cli", "s.both=cli", "buildfile.name="],
    );
    assert_eq!(attr(&w, "root//c:both", "msg"), s("cli"));
    assert_eq!(attr(&w, "root//c:cli", "msg"), s("from_cli"));
    assert_eq!(attr(&w, "root//c:unset", "msg"), s("default"));
    assert_eq!(attr(&w, "root//c:none", "msg"), s("None"));
    assert_eq!(attr(&w, "root//c:case", "msg"), s("None"));
    assert_eq!(attr(&w, "root//c:root", "msg"), s("from_local"));
}

#[test]
fn glob_in_build_files() {
    let w = workspace(
        &[
            ("g/b.txt", ""),
            ("g/A.TXT", ""),
            ("g/.hidden.txt", ""),
            ("g/sub/c.txt", ""),
            ("g/nested/BUCK", ""),
            ("g/nested/n.txt", ""),
            (
                "g/BUCK",
                "load(\"//rules:text.bzl\", \"text\")\n\
                 text(name = \"t\", msg = \",\".join(glob([\"**/*.txt\"], exclude = [\"sub/**\"])))\n",
            ),
        ],
        &[],
    );
    assert_eq!(attr(&w, "root//g:t", "msg"), s("A.TXT,b.txt"));
}

#[test]
fn patterns_and_package_discovery() {
    let w = workspace(
        &[
            (
                "BUCK",
                "load(\"//rules:text.bzl\", \"text\")\ntext(name = \"top\")\n",
            ),
            (
                "a/BUCK",
                "load(\"//rules:text.bzl\", \"text\")\ntext(name = \"x\")\ntext(name = \"y\")\n",
            ),
            (
                "a/b/BUCK",
                "load(\"//rules:text.bzl\", \"text\")\ntext(name = \"z\")\n",
            ),
            ("buck-out/v2/BUCK", "broken(\n"),
            (".hidden/BUCK", "broken(\n"),
            (
                "toolchains/BUCK",
                "load(\"@root//rules:text.bzl\", \"text\")\ntext(name = \"tc\")\n",
            ),
        ],
        &[],
    );
    let r = |p: &[&str], cwd: &str| -> Vec<String> {
        let p: Vec<String> = p.iter().map(|s| s.to_string()).collect();
        w.loader
            .resolve_patterns(&p, cwd)
            .unwrap()
            .iter()
            .map(|l| l.to_string())
            .collect()
    };
    assert_eq!(
        r(&["//..."], ""),
        vec!["root//:top", "root//a:x", "root//a:y", "root//a/b:z"]
    );
    assert_eq!(r(&["//a:"], ""), vec!["root//a:x", "root//a:y"]);
    assert_eq!(r(&["toolchains//..."], ""), vec!["toolchains//:tc"]);
    // A nested cell's directory through the outer cell: nothing recursively, an error by name.
    assert!(r(&["//toolchains/..."], "").is_empty());
    let e = w
        .loader
        .resolve_patterns(&["//toolchains:tc".to_string()], "")
        .unwrap_err()
        .to_string();
    assert!(e.contains("use `toolchains//` instead"), "{e}");
    assert_eq!(
        r(&[":y", "b:z[sub]"], "a"),
        vec!["root//a:y", "root//a/b:z[sub]"]
    );
    assert_eq!(r(&["..."], "a/b"), vec!["root//a/b:z"]);
    let e = w
        .loader
        .resolve_patterns(&["//a:nope".to_string()], "")
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with("Unknown target `nope` from package `root//a`.\nAvailable targets:"),
        "{e}"
    );
    assert!(e.contains("    x\n    y"), "{e}");
}

#[test]
fn uquery_deps_rdeps_and_sets() {
    let w = workspace(
        &[(
            "q/BUCK",
            "load(\"//rules:text.bzl\", \"text\")\n\
             text(name = \"a\", deps = [\":b\", \":c\"])\n\
             text(name = \"b\", deps = [\":d\"])\n\
             text(name = \"c\")\n\
             text(name = \"d\")\n",
        )],
        &[],
    );
    let env = QueryEnv {
        loader: &w.loader,
        cwd_package: "",
    };
    let q =
        |s: &str| -> Vec<String> { env.run(s).unwrap().iter().map(|t| t.name.clone()).collect() };
    assert_eq!(q("deps(//q:a)"), vec!["a", "b", "c", "d"]);
    assert_eq!(q("deps(//q:a, 1)"), vec!["a", "b", "c"]);
    assert_eq!(q("rdeps(//q:, //q:d)"), vec!["a", "b", "d"]);
    assert_eq!(q("rdeps(//q:, //q:d, 1)"), vec!["b", "d"]);
    assert_eq!(q("deps(//q:a) - deps(//q:b)"), vec!["a", "c"]);
    assert_eq!(q("deps(//q:b) intersect deps(//q:a, 1)"), vec!["b"]);
    assert_eq!(q("set(//q:c //q:d) + //q:a"), vec!["a", "c", "d"]);
    assert_eq!(q("kind('^te.t$', deps(//q:a))"), vec!["a", "b", "c", "d"]);
    assert!(q("kind(other, deps(//q:a))").is_empty());
    assert_eq!(q("filter(':[bc]$', deps(//q:a))"), vec!["b", "c"]);
}

#[test]
fn target_platform_from_attr_then_detector_spec() {
    let w = workspace(
        &[
            (
                ".buckconfig.local",
                "[parser]\n  target_platform_detector_spec = target:root//fast/...->root//config:fast \
                 target:root//...->root//config:default\n",
            ),
            (
                "fast/x/BUCK",
                "load(\"//rules:text.bzl\", \"text\")\n\
                 text(name = \"t\")\n\
                 text(name = \"own\", default_target_platform = \"//config:mine\")\n",
            ),
            ("BUCK", "load(\"//rules:text.bzl\", \"text\")\ntext(name = \"top\")\n"),
        ],
        &[],
    );
    let p = |t: &str| {
        w.loader
            .target_platform(&label(t))
            .unwrap()
            .map(|l| l.to_string())
    };
    assert_eq!(p("root//fast/x:t").as_deref(), Some("root//config:fast"));
    assert_eq!(p("root//fast/x:own").as_deref(), Some("root//config:mine"));
    assert_eq!(p("root//:top").as_deref(), Some("root//config:default"));
    let plain = workspace(
        &[(
            "BUCK",
            "load(\"//rules:text.bzl\", \"text\")\ntext(name = \"top\")\n",
        )],
        &[],
    );
    assert_eq!(
        plain.loader.target_platform(&label("root//:top")).unwrap(),
        None
    );
}

#[test]
fn visibility_and_toolchain_checks() {
    let toolchain_rule = "def _i(ctx):\n    return [DefaultInfo()]\n\
        tc = rule(impl = _i, attrs = {}, is_toolchain_rule = True)\n\
        user = rule(impl = _i, attrs = {\"t\": attrs.toolchain_dep(), \"d\": attrs.list(attrs.dep(), default = [])})\n";
    let w = workspace(
        &[
            ("rules/tc.bzl", toolchain_rule),
            (
                "lib/BUCK",
                "load(\"//rules:text.bzl\", \"text\")\n\
                 text(name = \"private\")\n\
                 text(name = \"public\", visibility = [\"PUBLIC\"])\n\
                 text(name = \"for_app\", visibility = [\"//app/...\"])\n\
                 text(name = \"sibling\", deps = [\":private\"])\n",
            ),
            (
                "app/BUCK",
                "load(\"//rules:text.bzl\", \"text\")\nload(\"//rules:tc.bzl\", \"tc\", \"user\")\n\
                 text(name = \"ok\", deps = [\"//lib:public\", \"//lib:for_app\"])\n\
                 text(name = \"bad\", deps = [\"//lib:private\"])\n\
                 tc(name = \"tc\")\n\
                 user(name = \"good_tc\", t = \":tc\")\n\
                 user(name = \"not_tc\", t = \":ok\")\n\
                 user(name = \"tc_as_dep\", t = \":tc\", d = [\":tc\"])\n",
            ),
            ("other/BUCK", "load(\"//rules:text.bzl\", \"text\")\ntext(name = \"x\", deps = [\"//lib:for_app\"])\n"),
        ],
        &[],
    );
    let check =
        |t: &str| super::checks::check_graph(&w.loader, &[label(t)]).map_err(|e| format!("{e:#}"));
    assert!(check("root//app:ok").is_ok());
    assert!(check("root//lib:sibling").is_ok());
    assert!(check("root//app:good_tc").is_ok());
    let e = check("root//app:bad").unwrap_err();
    assert!(
        e.contains("`root//lib:private` is not visible to `root//app:bad`"),
        "{e}"
    );
    assert!(check("root//other:x").unwrap_err().contains("not visible"));
    let e = check("root//app:not_tc").unwrap_err();
    assert!(
        e.contains("was used as a toolchain_dep, but is not a toolchain rule"),
        "{e}"
    );
    let e = check("root//app:tc_as_dep").unwrap_err();
    assert!(
        e.contains("was used not as a toolchain_dep, but is a toolchain rule"),
        "{e}"
    );
}

/// `rule(cfg = ...)`, `supports_incoming_transition`, `uses_plugins` and
/// `attrs.string(validate = ...)` change what buck2 builds; forge has none of them yet, so a
/// file that uses one is refused at its line rather than built differently. `None` is the
/// same as leaving the argument out (as buck2's optional arguments).
#[test]
fn unsupported_arguments_are_refused_not_dropped() {
    let bzl = |arg: &str| {
        format!(
            "def _impl(ctx):\n    return [DefaultInfo()]\n\nr = rule(impl = _impl, attrs = {{}}, {arg})\n"
        )
    };
    let cases = [
        ("tr", bzl("cfg = _impl"), "`rule(cfg = ...)`", "configuration transitions"),
        (
            "inc",
            bzl("supports_incoming_transition = True"),
            "`rule(supports_incoming_transition = ...)`",
            "incoming configuration transitions",
        ),
        ("plug", bzl("uses_plugins = []"), "`rule(uses_plugins = ...)`", "rule plugins"),
        (
            "val",
            "def _impl(ctx):\n    return [DefaultInfo()]\n\nr = rule(impl = _impl, attrs = {\"s\": attrs.string(validate = len)})\n".to_string(),
            "`attrs.string(validate = ...)`",
            "attribute validators",
        ),
    ];
    let mut files: Vec<(String, String)> = Vec::new();
    for (pkg, text, _, _) in &cases {
        files.push((format!("{pkg}/defs.bzl"), text.clone()));
        files.push((format!("{pkg}/BUCK"), "load(\":defs.bzl\", \"r\")\n".into()));
    }
    files.push((
        "none/defs.bzl".into(),
        "def _impl(ctx):\n    return [DefaultInfo()]\n\nr = rule(impl = _impl, attrs = {\"s\": attrs.string(default = \"\", validate = None)}, cfg = None, uses_plugins = None)\n".into(),
    ));
    files.push((
        "none/BUCK".into(),
        "load(\":defs.bzl\", \"r\")\nr(name = \"t\")\n".into(),
    ));
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let w = workspace(&refs, &[]);
    for (pkg, _, call, what) in cases {
        let e = error(&w, "root", pkg);
        assert!(e.contains(&format!("{pkg}/defs.bzl:4")), "{e}");
        assert!(e.contains(call), "{e}");
        assert!(e.contains(&format!("does not support {what} yet")), "{e}");
        assert!(e.contains("build with upstream buck2"), "{e}");
    }
    assert!(w.loader.get_target(&label("root//none:t")).is_ok());
}
