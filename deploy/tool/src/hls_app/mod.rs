//! `app = "hls"`: the user's own HLS kernels. `[[kernel]]` places a CU of an `hls_kernel` on a
//! device (scalar defaults, memory banks, SLR), `[[stream]]` joins two stream ports, on one
//! card (`stream_connect`) or over one direction of a cable between two cards (the AuroraFlow
//! pair). Parsed and cabled with the description (`parse`), checked against the kernels'
//! `kernel.json` (`check`), and turned into one device's design (`design`) that the link
//! config, the sim description, the scripts and the report render as for every app.

pub mod check;
pub mod design;
pub mod parse;
pub mod report;

use std::ops::Range;

use crate::deployment::End;

/// A CU of the user's kernel on one device (`[[kernel]]`).
#[derive(Clone, Debug)]
pub struct HlsCu {
    pub cu: String,
    /// The kernel's `name` in its kernel.json (the `hls_kernel` target's).
    pub kernel: String,
    pub device: String,
    /// Scalar argument -> default value the host uses when it passes none.
    pub scalars: Vec<(String, i64, Range<usize>)>,
    /// m_axi argument -> memory bank the description chose.
    pub memory: Vec<(String, String, Range<usize>)>,
    pub slr: Option<String>,
    /// The `[[kernel]]` table (its `cu` key) and its `kernel` key.
    pub span: Range<usize>,
    pub kernel_span: Range<usize>,
}

/// `DEVICE.CU.PORT`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamEnd {
    pub device: String,
    pub cu: String,
    pub port: String,
}

impl std::fmt::Display for StreamEnd {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.device, self.cu, self.port)
    }
}

/// One direction of a cable: `from` is the cable's end at the sending device.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CableDir {
    pub link: usize,
    pub from: End,
    pub to: End,
}

/// A `[[stream]]`: on one card when `cable` is None.
#[derive(Clone, Debug)]
pub struct HlsStream {
    pub from: StreamEnd,
    pub to: StreamEnd,
    pub cable: Option<CableDir>,
    /// FIFO depth of a same-card stream (`stream_connect=...:DEPTH`).
    pub depth: Option<u32>,
    pub span: Range<usize>,
    pub from_span: Range<usize>,
    pub to_span: Range<usize>,
}

/// The HLS app of a description; empty for the other apps.
#[derive(Clone, Debug, Default)]
pub struct HlsApp {
    pub cus: Vec<HlsCu>,
    pub streams: Vec<HlsStream>,
}

impl HlsApp {
    pub fn cus_of<'a>(&'a self, device: &'a str) -> impl Iterator<Item = &'a HlsCu> + 'a {
        self.cus.iter().filter(move |c| c.device == device)
    }

    pub fn cu(&self, device: &str, cu: &str) -> Option<&HlsCu> {
        self.cus.iter().find(|c| c.device == device && c.cu == cu)
    }

    /// The streams sent from, and received at, a cable end.
    pub fn over(&self, end: &End) -> (Vec<&HlsStream>, Vec<&HlsStream>) {
        let on = |f: fn(&CableDir) -> &End| {
            self.streams
                .iter()
                .filter(|s| s.cable.as_ref().is_some_and(|c| f(c) == end))
                .collect::<Vec<_>>()
        };
        (on(|c| &c.from), on(|c| &c.to))
    }
}

/// topology.json's `cus` (device, cu, kernel, scalar defaults, memory banks the description
/// chose; [`assigned_banks`] adds the ones the link step chose) and `streams` (ends, and the cable direction of a stream between cards).
pub fn topology(dep: &crate::deployment::Deployment) -> (serde_json::Value, serde_json::Value) {
    use serde_json::{json, Map, Value};
    let cus: Vec<Value> = dep
        .hls
        .cus
        .iter()
        .map(|c| {
            let scalars: Map<String, Value> = c
                .scalars
                .iter()
                .map(|(k, v, _)| (k.clone(), json!(v)))
                .collect();
            let memory: Map<String, Value> = c
                .memory
                .iter()
                .map(|(k, v, _)| (k.clone(), json!(v)))
                .collect();
            json!({"device": c.device, "cu": c.cu, "kernel": c.kernel,
                   "scalars": scalars, "memory": memory})
        })
        .collect();
    let streams: Vec<Value> = dep
        .hls
        .streams
        .iter()
        .map(|s| {
            json!({"from": s.from.to_string(), "to": s.to.to_string(),
                   "cable": s.cable.as_ref().map(|c| json!({"from": c.from.to_string(),
                                                             "to": c.to.to_string()}))})
        })
        .collect();
    (Value::Array(cus), Value::Array(streams))
}

/// Every m_axi argument's bank in topology.json's `cus`, as each device's link step bound it
/// (its sim description: `memory` by CU and port, the port of an argument from its kernel's
/// `params.args`), so the host allocates each buffer where the kernel reads it.
pub fn assigned_banks(topology: &mut serde_json::Value, sims: &[serde_json::Value]) {
    let Some(cus) = topology["cus"].as_array_mut() else {
        return;
    };
    for cu in cus {
        let (device, name) = (cu["device"].clone(), cu["cu"].clone());
        let Some(sim) = sims.iter().find(|s| s["device"] == device) else {
            continue;
        };
        let kernel = sim["kernels"]
            .as_array()
            .and_then(|ks| ks.iter().find(|k| k["cu"] == name));
        let args = kernel.and_then(|k| k["params"]["args"].as_array());
        for a in args.into_iter().flatten().filter(|a| a["kind"] == "memory") {
            let bank = sim["memory"].as_array().and_then(|ms| {
                ms.iter()
                    .find(|m| m["cu"] == name && m["port"] == a["port"])
                    .map(|m| m["bank"].clone())
            });
            if let (Some(arg), Some(bank)) = (a["name"].as_str(), bank) {
                cu["memory"][arg] = bank;
            }
        }
    }
}
