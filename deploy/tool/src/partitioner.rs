//! The partitioner's inputs from the deployment (finn/partitioner `devices.rs` DevicesFile,
//! `topology.rs` Topology::Links), so its cuts can only fall on cables that exist.

use serde_json::{json, Value};

use crate::deployment::Deployment;
use crate::platform::Platform;

pub fn devices_json(dep: &Deployment, platform: &Platform) -> Value {
    let total: serde_json::Map<String, Value> = crate::deployment::RESOURCES
        .iter()
        .map(|r| {
            (
                r.to_string(),
                json!(platform.resources.get(*r).copied().unwrap_or(0.0)),
            )
        })
        .collect();
    let slrs = slrs_json(platform);
    let devices: Vec<Value> = dep
        .devices
        .iter()
        .map(|d| {
            let mut dev = json!({
                "name": d.name,
                "total": total,
                "clk_mhz": d.clock_mhz,
                "ports": platform.qsfp.len(),
                "max_util": d.max_util,
                "slrs": slrs,
            });
            // Only when given, so devices.json (and the partitioner's action) of a
            // description without floors stays as it was.
            if d.min_util.values().any(|&f| f > 0.0) {
                dev["min_util"] = json!(d.min_util);
            }
            dev
        })
        .collect();
    json!({ "devices": devices })
}

/// The card's SLRs for the partitioner's SLR placement (finn/partitioner `slr.rs`
/// SlrSpec): each SLR's resources and the QSFP ports (AuroraFlow CUs) in it.
fn slrs_json(platform: &Platform) -> Value {
    let slrs: Vec<Value> = platform
        .slr_resources
        .iter()
        .map(|(name, res)| {
            let ports: Vec<u32> = platform
                .qsfp
                .iter()
                .filter(|q| &q.slr == name)
                .map(|q| q.port)
                .collect();
            json!({"name": name, "total": res, "qsfp_ports": ports})
        })
        .collect();
    json!(slrs)
}

/// Every cable between two different devices; a card's port looped to its other port (or to
/// itself) carries no cut.
pub fn topology_json(dep: &Deployment) -> Value {
    let links: Vec<Value> = dep
        .links
        .iter()
        .filter(|l| l.a.device != l.b.device)
        .map(|l| json!({"a": l.a.device, "a_port": l.a.port, "b": l.b.device, "b_port": l.b.port}))
        .collect();
    json!({ "kind": "links", "links": links })
}
