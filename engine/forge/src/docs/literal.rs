//! Attribute types and coerced defaults written back as the Starlark a rule author types.

use crate::model::{AttrType, CoercedAttr, DepKind};

/// `attrs.list(attrs.source())`, `attrs.dep(providers = [RunInfo])`, ...
pub fn attr_type(ty: &AttrType) -> String {
    match ty {
        AttrType::Any => "attrs.any()".into(),
        AttrType::String => "attrs.string()".into(),
        AttrType::Int => "attrs.int()".into(),
        AttrType::Bool => "attrs.bool()".into(),
        AttrType::List(t) => format!("attrs.list({})", attr_type(t)),
        AttrType::Tuple(ts) => format!("attrs.tuple({})", list(ts)),
        AttrType::Dict { key, value, .. } => {
            format!("attrs.dict({}, {})", attr_type(key), attr_type(value))
        }
        AttrType::Option(t) => format!("attrs.option({})", attr_type(t)),
        AttrType::OneOf(ts) => format!("attrs.one_of({})", list(ts)),
        AttrType::Enum(vs) => format!(
            "attrs.enum([{}])",
            vs.iter()
                .map(|v| format!("{v:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        AttrType::Source { allow_directory } => {
            if *allow_directory {
                "attrs.source(allow_directory = True)".into()
            } else {
                "attrs.source()".into()
            }
        }
        AttrType::Dep { kind, providers } => {
            let f = match kind {
                DepKind::Normal => "dep",
                DepKind::Exec => "exec_dep",
                DepKind::Toolchain => "toolchain_dep",
            };
            if providers.is_empty() {
                format!("attrs.{f}()")
            } else {
                let names: Vec<String> = providers.iter().map(|p| p.value().to_string()).collect();
                format!("attrs.{f}(providers = [{}])", names.join(", "))
            }
        }
        AttrType::Label => "attrs.label()".into(),
        AttrType::Arg => "attrs.arg()".into(),
    }
}

fn list(ts: &[AttrType]) -> String {
    ts.iter().map(attr_type).collect::<Vec<_>>().join(", ")
}

/// A default as a Starlark literal: `"release"`, `[]`, `True`, `"toolchains//:fpga"`.
pub fn coerced(v: &CoercedAttr) -> String {
    match v {
        CoercedAttr::None => "None".into(),
        CoercedAttr::Bool(b) => if *b { "True" } else { "False" }.into(),
        CoercedAttr::Int(i) => i.to_string(),
        CoercedAttr::String(s) => format!("{s:?}"),
        CoercedAttr::List(xs) => format!("[{}]", items(xs)),
        CoercedAttr::Tuple(xs) if xs.len() == 1 => format!("({},)", items(xs)),
        CoercedAttr::Tuple(xs) => format!("({})", items(xs)),
        CoercedAttr::Dict(kvs) => format!(
            "{{{}}}",
            kvs.iter()
                .map(|(k, v)| format!("{}: {}", coerced(k), coerced(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        CoercedAttr::Dep { label, .. }
        | CoercedAttr::SourceDep(label)
        | CoercedAttr::Label(label) => {
            format!("\"{label}\"")
        }
        CoercedAttr::SourceFile { project_path, .. } => format!("{project_path:?}"),
        CoercedAttr::Arg { raw, .. } => format!("{raw:?}"),
        CoercedAttr::Select(branches) => format!(
            "select({{{}}})",
            branches
                .iter()
                .map(|(k, v)| format!("{k:?}: {}", coerced(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        CoercedAttr::Concat(xs) => xs.iter().map(coerced).collect::<Vec<_>>().join(" + "),
    }
}

fn items(xs: &[CoercedAttr]) -> String {
    xs.iter().map(coerced).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_read_as_starlark() {
        assert_eq!(coerced(&CoercedAttr::Bool(true)), "True");
        assert_eq!(coerced(&CoercedAttr::String("a\"b".into())), r#""a\"b""#);
        assert_eq!(
            coerced(&CoercedAttr::Tuple(vec![CoercedAttr::Int(1)])),
            "(1,)"
        );
        assert_eq!(
            coerced(&CoercedAttr::Dict(vec![(
                CoercedAttr::String("k".into()),
                CoercedAttr::List(vec![])
            )])),
            r#"{"k": []}"#
        );
    }

    #[test]
    fn types_read_as_attrs_calls() {
        assert_eq!(
            attr_type(&AttrType::List(Box::new(AttrType::Source {
                allow_directory: false
            }))),
            "attrs.list(attrs.source())"
        );
        assert_eq!(
            attr_type(&AttrType::Enum(vec!["a".into(), "b".into()])),
            r#"attrs.enum(["a", "b"])"#
        );
    }
}
