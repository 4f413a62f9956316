//! The JSON `ctx.actions.write_json` writes: compact or pretty, keys in insertion order,
//! artifacts as paths and `cmd_args` as lists of strings (O4 of conformance/README.md;
//! conformance/write shows it).

use starlark::values::dict::DictRef;
use starlark::values::float::StarlarkFloat;
use starlark::values::list::ListRef;
use starlark::values::structs::StructRef;
use starlark::values::tuple::TupleRef;
use starlark::values::{UnpackValue, Value, ValueLike};

use super::artifact::{StarlarkArtifact, StarlarkOutputArtifact};
use super::cmd_args::{ArgDeps, ArgItem, StarlarkCmdArgs};
use super::label::{StarlarkLabel, StarlarkTargetLabel};

#[derive(Debug, thiserror::Error)]
enum JsonError {
    #[error("write_json: dict keys must be strings, got `{0}`")]
    NonStringKey(String),
    #[error("write_json: value `{0}` of type `{1}` cannot be written as JSON")]
    Unsupported(String, String),
}

/// Converts a Starlark value; artifacts met on the way are recorded in `deps`.
pub fn to_json(
    v: Value,
    root: Option<&str>,
    deps: &mut ArgDeps,
) -> anyhow::Result<serde_json::Value> {
    use serde_json::Value as J;
    if v.is_none() {
        return Ok(J::Null);
    }
    if let Some(b) = v.unpack_bool() {
        return Ok(J::Bool(b));
    }
    if let Some(s) = v.unpack_str() {
        return Ok(J::String(s.to_owned()));
    }
    if let Ok(Some(i)) = i64::unpack_value(v) {
        return Ok(J::from(i));
    }
    if let Some(f) = v.downcast_ref::<StarlarkFloat>() {
        return Ok(serde_json::Number::from_f64(f.0)
            .map(J::Number)
            .unwrap_or(J::Null));
    }
    if let Some(l) = ListRef::from_value(v) {
        return l.iter().map(|x| to_json(x, root, deps)).collect();
    }
    if let Some(t) = TupleRef::from_value(v) {
        return t.iter().map(|x| to_json(x, root, deps)).collect();
    }
    if let Some(d) = DictRef::from_value(v) {
        let mut m = serde_json::Map::new();
        for (k, x) in d.iter() {
            let key = k
                .unpack_str()
                .ok_or_else(|| JsonError::NonStringKey(k.to_repr()))?;
            m.insert(key.to_owned(), to_json(x, root, deps)?);
        }
        return Ok(J::Object(m));
    }
    if let Some(s) = StructRef::from_value(v) {
        let mut m = serde_json::Map::new();
        for (k, x) in s.iter() {
            m.insert(k.as_str().to_owned(), to_json(x, root, deps)?);
        }
        return Ok(J::Object(m));
    }
    if let Some(a) = StarlarkArtifact::from_value(v) {
        deps.add_input(&a.0);
        let data = super::cmd_args::CmdArgsData {
            items: vec![ArgItem::Artifact(a.0.clone())],
            ..Default::default()
        };
        return Ok(J::String(data.render(root).remove(0)));
    }
    if let Some(o) = StarlarkOutputArtifact::from_value(v) {
        return Ok(J::String(o.0.rendered_path()));
    }
    if let Some(c) = StarlarkCmdArgs::from_value(v) {
        let data = c.data();
        data.visit_deps(deps);
        return Ok(J::Array(
            data.render(root).into_iter().map(J::String).collect(),
        ));
    }
    if let Some(l) = v.downcast_ref::<StarlarkLabel>() {
        return Ok(J::String(l.0.to_string()));
    }
    if let Some(l) = v.downcast_ref::<StarlarkTargetLabel>() {
        return Ok(J::String(l.0.to_string()));
    }
    v.to_json_value()
        .map_err(|_| JsonError::Unsupported(v.to_repr(), v.get_type().to_owned()).into())
}

/// The bytes buck2 writes: compact without newline, or pretty with a trailing newline.
pub fn render_json(j: &serde_json::Value, pretty: bool) -> Vec<u8> {
    if pretty {
        let mut s = serde_json::to_vec_pretty(j).expect("JSON values serialise");
        s.push(b'\n');
        s
    } else {
        serde_json::to_vec(j).expect("JSON values serialise")
    }
}
