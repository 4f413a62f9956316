//! Fields of a deployment's topology.json (deploy-tool writes it, `auroraforge-topology/1`),
//! read here with serde_json's untyped `Value` on purpose: the tests check what the tool
//! wrote against an independent reading, not through the writer's own type.

use serde_json::Value;

use crate::{read, Error};

/// The format deploy-tool names in every topology.json it writes.
pub const FORMAT: &str = "auroraforge-topology/1";

/// What `topology FIELD FILE` prints.
pub const FIELDS: &str = "devices|links|nodes|app|cut-copies";

/// `topology FIELD FILE`: the number of devices, links or nodes, the app, or how many
/// replica copies are cut across cards (a copy whose input and output DMA sit on
/// different devices).
pub fn field(field: &str, path: &str) -> Result<String, Error> {
    let t = parse(path)?;
    match field {
        "devices" | "links" => Ok(list(&t, path, field)?.len().to_string()),
        "nodes" => t
            .get("nodes")
            .and_then(Value::as_u64)
            .map(|n| n.to_string())
            .ok_or_else(|| missing(path, "a number \"nodes\"")),
        "app" => t
            .get("app")
            .and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| missing(path, "a string \"app\"")),
        "cut-copies" => cut_copies(&t, path).map(|n| n.to_string()),
        other => Err(Error::Bad(format!(
            "topology: no field {other:?}; give one of {FIELDS}"
        ))),
    }
}

/// The file as JSON, refused when it is not a topology deploy-tool wrote.
fn parse(path: &str) -> Result<Value, Error> {
    let text = read(path)?;
    let t: Value = serde_json::from_str(&text).map_err(|e| {
        Error::Bad(format!(
            "{path}:{}:{}: not JSON ({e}); a topology.json as deploy-tool writes it is expected",
            e.line(),
            e.column()
        ))
    })?;
    match t.get("format").and_then(Value::as_str) {
        Some(FORMAT) => Ok(t),
        other => Err(Error::Bad(format!(
            "{path}: format {}, want {FORMAT:?}: not a topology.json deploy-tool wrote \
             (rebuild the deployment, or pass its [topology] output)",
            other.map_or("missing".to_string(), |f| format!("{f:?}"))
        ))),
    }
}

fn list<'a>(t: &'a Value, path: &str, key: &str) -> Result<&'a Vec<Value>, Error> {
    t.get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| missing(path, &format!("a list {key:?}")))
}

fn cut_copies(t: &Value, path: &str) -> Result<usize, Error> {
    let copies = t
        .get("replicas")
        .and_then(|r| r.get("copies"))
        .and_then(Value::as_array)
        .ok_or_else(|| {
            missing(
                path,
                "\"replicas\": {\"copies\": [...]} (a replica deployment)",
            )
        })?;
    let mut cut = 0;
    for (i, c) in copies.iter().enumerate() {
        let device = |end: &str| {
            c.get(end)
                .and_then(|d| d.get("device"))
                .and_then(Value::as_str)
                .ok_or_else(|| missing(path, &format!("replicas.copies[{i}].{end}.device")))
        };
        if device("dma_in")? != device("dma_out")? {
            cut += 1;
        }
    }
    Ok(cut)
}

fn missing(path: &str, what: &str) -> Error {
    Error::Bad(format!("{path}: no {what} in this topology.json"))
}
