//! The cables of a description: `[topology]` kinds turned into links, `[[link]]` ends and
//! lengths read, and every cable checked against the devices and the platform's ports.

use std::collections::HashMap;

use anyhow::Result;
use toml::Spanned;

use crate::deployment::{Deployment, Device, End, Link, Number, DEFAULT_CABLE_M};
use crate::diag::Source;
use crate::platform::Platform;

/// A `[[link]]` end, `DEVICE:PORT`.
pub(crate) fn parse_end(src: &Source, s: &Spanned<String>) -> Result<End> {
    let text = s.get_ref();
    let (dev, port) = text.rsplit_once(':').ok_or_else(|| {
        src.at(
            &s.span(),
            format!("link end '{text}' is not DEVICE:PORT (e.g. fpga0:1)"),
        )
    })?;
    let port = port.parse::<u32>().map_err(|_| {
        src.at(
            &s.span(),
            format!("link end '{text}': port '{port}' is not a number"),
        )
    })?;
    Ok(End {
        device: dev.to_string(),
        port,
    })
}

/// A cable's length in metres (DEFAULT_CABLE_M when not given).
pub(crate) fn cable_length(src: &Source, c: &Option<Spanned<Number>>) -> Result<f64> {
    match c {
        Some(c) if !(c.get_ref().get() >= 0.0 && c.get_ref().get().is_finite()) => Err(src.at(
            &c.span(),
            "cable_m must be a finite length in metres, 0 or more",
        )),
        Some(c) => Ok(c.get_ref().get()),
        None => Ok(DEFAULT_CABLE_M),
    }
}

/// Every link end a device of the file and a QSFP port the platform has, no cable from a
/// port to itself, every port on one cable at most.
pub(crate) fn check_links(dep: &Deployment, platform: &Platform) -> Result<()> {
    let names: HashMap<&str, &Device> = dep.devices.iter().map(|d| (d.name.as_str(), d)).collect();
    let mut used: HashMap<End, &Link> = HashMap::new();
    for l in &dep.links {
        for end in [&l.a, &l.b] {
            if !names.contains_key(end.device.as_str()) {
                return Err(dep.src.at(
                    &l.span,
                    format!(
                        "link {} - {} names device {}, which is not in the deployment \
                         (devices: {})",
                        l.a,
                        l.b,
                        end.device,
                        dep.device_names().join(", ")
                    ),
                ));
            }
            if platform.qsfp(end.port).is_none() {
                return Err(dep.src.at(
                    &l.span,
                    format!(
                        "link end {end}: platform {} has QSFP ports {:?}, not {}",
                        platform.name,
                        platform.ports(),
                        end.port
                    ),
                ));
            }
        }
        // Each channel endpoint appears at most once in a job's links (PC2 wiki
        // "FPGA-to-FPGA Networking"): a cable from a port to itself does not exist.
        if l.a == l.b {
            return Err(dep.src.at(
                &l.span,
                format!(
                    "link {} - {} runs from a port to itself; a cable joins two different \
                     QSFP ports (a loopback on one card is {}:0 - {}:1)",
                    l.a, l.b, l.a.device, l.a.device
                ),
            ));
        }
        for end in [&l.a, &l.b] {
            if let Some(prev) = used.insert(end.clone(), l) {
                return Err(dep.src.at(
                    &l.span,
                    format!(
                        "port {end} is used twice: by link {} - {} (line {}) and by link \
                         {} - {}; each QSFP port carries one cable",
                        prev.a,
                        prev.b,
                        dep.src.line(&prev.span),
                        l.a,
                        l.b
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The links of a `[topology] kind` over the devices in file order.
pub(crate) fn generate(
    src: &Source,
    kind: &Spanned<String>,
    devs: &[Device],
    cable_m: f64,
) -> Result<Vec<Link>> {
    let n = devs.len();
    let end = |i: usize, port: u32| End {
        device: devs[i].name.clone(),
        port,
    };
    let span = kind.span();
    let link = |a, b| Link {
        a,
        b,
        cable_m,
        span: span.clone(),
    };
    let mut out = Vec::new();
    match kind.get_ref().as_str() {
        // port 1 of device i -> port 0 of device i+1
        "chain" => {
            for i in 0..n.saturating_sub(1) {
                out.push(link(end(i, 1), end(i + 1, 0)));
            }
        }
        "ring" => {
            if n < 2 {
                return Err(src.at(&span, "a ring needs at least 2 devices"));
            }
            for i in 0..n {
                out.push(link(end(i, 1), end((i + 1) % n, 0)));
            }
        }
        "pair" => {
            if !n.is_multiple_of(2) {
                return Err(src.at(&span, "pair needs an even number of devices"));
            }
            for i in (0..n).step_by(2) {
                out.push(link(end(i, 0), end(i + 1, 0)));
                out.push(link(end(i, 1), end(i + 1, 1)));
            }
        }
        "loopback" => {
            for i in 0..n {
                out.push(link(end(i, 0), end(i, 1)));
            }
        }
        other => {
            return Err(src.at(
                &span,
                format!("topology kind '{other}' is not one of: chain, ring, pair, loopback"),
            ))
        }
    }
    Ok(out)
}
