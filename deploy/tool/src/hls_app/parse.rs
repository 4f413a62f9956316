//! `[[kernel]]` and `[[stream]]` read with their lines, and each cross-card stream given one
//! direction of a cable between its two devices. Everything that needs no kernel.json is
//! checked here, so `deploy-tool check` already refuses it.

use std::collections::{BTreeMap, HashMap};

use anyhow::Result;
use serde::Deserialize;
use toml::Spanned;

use super::{CableDir, HlsApp, HlsCu, HlsStream, StreamEnd};
use crate::cabling::parse_end;
use crate::deployment::{App, Deployment};
use crate::fields;
use crate::platform::Platform;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawKernel {
    cu: Spanned<String>,
    kernel: Spanned<String>,
    device: Spanned<String>,
    #[serde(default)]
    scalars: BTreeMap<String, Spanned<toml::Value>>,
    #[serde(default)]
    memory: BTreeMap<String, Spanned<String>>,
    slr: Option<Spanned<String>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RawStream {
    from: Spanned<String>,
    to: Spanned<String>,
    cable: Option<Spanned<String>>,
    depth: Option<Spanned<u32>>,
}

/// The HLS app of `dep` from its raw tables (the deployment's devices and cables already
/// checked); [[kernel]]/[[stream]] in another app are refused at their line.
pub fn parse(
    dep: &Deployment,
    kernels: &[Spanned<RawKernel>],
    streams: &[Spanned<RawStream>],
    platform: &Platform,
) -> Result<HlsApp> {
    let src = &dep.src;
    if dep.app != App::Hls {
        let first = kernels
            .first()
            .map(|k| k.span())
            .or_else(|| streams.first().map(|s| s.span()));
        if let Some(span) = first {
            return Err(src.at(
                &span,
                format!(
                    "[[kernel]] and [[stream]] place the user's HLS kernels, but app = {:?}; \
                     set app = \"hls\" or remove them",
                    dep.app.name()
                ),
            ));
        }
        return Ok(HlsApp::default());
    }
    if kernels.is_empty() {
        return Err(src.at(
            &dep.top_span,
            "app hls places no kernel: add [[kernel]] tables (cu, kernel, device)",
        ));
    }
    let mut app = HlsApp::default();
    for k in kernels {
        let cu = cu(dep, k.get_ref(), platform)?;
        if let Some(prev) = app.cu(&cu.device, &cu.cu) {
            return Err(src.at(
                &cu.span,
                format!(
                    "CU {} is on device {} twice (also at line {}); CU names are unique on a \
                     device: rename one",
                    cu.cu,
                    cu.device,
                    src.line(&prev.span)
                ),
            ));
        }
        app.cus.push(cu);
    }
    for s in streams {
        let st = stream(dep, &app, s)?;
        app.streams.push(st);
    }
    assign_cables(dep, &mut app, streams)?;
    Ok(app)
}

fn cu(dep: &Deployment, r: &RawKernel, platform: &Platform) -> Result<HlsCu> {
    let src = &dep.src;
    if let Some(why) = fields::device_name(r.cu.get_ref()) {
        return Err(src.at(
            &r.cu.span(),
            format!("CU name {:?} {why}; rename it", r.cu.get_ref()),
        ));
    }
    let device = r.device.get_ref();
    if dep.device(device).is_none() {
        return Err(src.at(
            &r.device.span(),
            format!(
                "CU {}: device {device} is not in the deployment (devices: {})",
                r.cu.get_ref(),
                dep.device_names().join(", ")
            ),
        ));
    }
    let mut scalars = Vec::new();
    for (name, v) in &r.scalars {
        match v.get_ref() {
            toml::Value::Integer(i) => scalars.push((name.clone(), *i, v.span())),
            other => {
                return Err(src.at(
                    &v.span(),
                    format!(
                        "CU {}: scalar default {name} = {other} is not an integer; a scalar \
                         argument's default is a whole number (e.g. {name} = 1024)",
                        r.cu.get_ref()
                    ),
                ))
            }
        }
    }
    let mut memory = Vec::new();
    for (arg, bank) in &r.memory {
        if let Err(e) = platform.check_bank(bank.get_ref()) {
            return Err(src.at(
                &bank.span(),
                format!("CU {} memory {arg}: {e}", r.cu.get_ref()),
            ));
        }
        memory.push((arg.clone(), bank.get_ref().clone(), bank.span()));
    }
    if let Some(slr) = &r.slr {
        if let Err(e) = platform.check_slr(slr.get_ref()) {
            return Err(src.at(&slr.span(), format!("CU {}: {e}", r.cu.get_ref())));
        }
    }
    Ok(HlsCu {
        cu: r.cu.get_ref().clone(),
        kernel: r.kernel.get_ref().clone(),
        device: device.clone(),
        scalars,
        memory,
        slr: r.slr.as_ref().map(|s| s.get_ref().clone()),
        span: r.cu.span(),
        kernel_span: r.kernel.span(),
    })
}

/// `DEVICE.CU.PORT`, the device and its CU known.
fn end(dep: &Deployment, app: &HlsApp, s: &Spanned<String>) -> Result<StreamEnd> {
    let src = &dep.src;
    let parts: Vec<&str> = s.get_ref().split('.').collect();
    let [device, cu, port] = parts.as_slice() else {
        return Err(src.at(
            &s.span(),
            format!(
                "stream end '{}' is not DEVICE.CU.PORT (e.g. fpga0.producer_0.out)",
                s.get_ref()
            ),
        ));
    };
    if dep.device(device).is_none() {
        return Err(src.at(
            &s.span(),
            format!(
                "stream end '{}': device {device} is not in the deployment (devices: {})",
                s.get_ref(),
                dep.device_names().join(", ")
            ),
        ));
    }
    if app.cu(device, cu).is_none() {
        let cus: Vec<&str> = app.cus_of(device).map(|c| c.cu.as_str()).collect();
        return Err(src.at(
            &s.span(),
            format!(
                "stream end '{}': device {device} has no CU {cu} (its CUs: {}); add a \
                 [[kernel]] with cu = {cu:?} and device = {device:?} or fix the name",
                s.get_ref(),
                if cus.is_empty() {
                    "none".to_string()
                } else {
                    cus.join(", ")
                }
            ),
        ));
    }
    Ok(StreamEnd {
        device: device.to_string(),
        cu: cu.to_string(),
        port: port.to_string(),
    })
}

fn stream(dep: &Deployment, app: &HlsApp, s: &Spanned<RawStream>) -> Result<HlsStream> {
    let src = &dep.src;
    let r = s.get_ref();
    let from = end(dep, app, &r.from)?;
    let to = end(dep, app, &r.to)?;
    for prev in &app.streams {
        if prev.from == from {
            return Err(src.at(
                &r.from.span(),
                format!(
                    "output {from} already feeds the stream at line {}; an AXI4-Stream output \
                     has one reader: add a second output port to the kernel or remove a stream",
                    src.line(&prev.span)
                ),
            ));
        }
        if prev.to == to {
            return Err(src.at(
                &r.to.span(),
                format!(
                    "input {to} is already driven by the stream at line {}; an AXI4-Stream \
                     input has one writer",
                    src.line(&prev.span)
                ),
            ));
        }
    }
    if let (Some(d), None) = (&r.depth, cross(&from, &to)) {
        if *d.get_ref() == 0 {
            return Err(src.at(&d.span(), "depth must be at least 1 (or left out)"));
        }
    }
    if let (Some(d), Some(_)) = (&r.depth, cross(&from, &to)) {
        return Err(src.at(
            &d.span(),
            "depth sets the FIFO of a stream on one card; a stream between cards is buffered \
             by the link kernels' FIFOs: remove depth",
        ));
    }
    if let (Some(c), None) = (&r.cable, cross(&from, &to)) {
        return Err(src.at(
            &c.span(),
            format!(
                "cable = {:?}, but {from} and {to} are on one card (a stream_connect, no \
                 cable): remove cable",
                c.get_ref()
            ),
        ));
    }
    Ok(HlsStream {
        from,
        to,
        cable: None,
        depth: r.depth.as_ref().map(|d| *d.get_ref()),
        span: s.span(),
        from_span: r.from.span(),
        to_span: r.to.span(),
    })
}

/// The two devices of a stream between cards.
fn cross<'a>(from: &'a StreamEnd, to: &'a StreamEnd) -> Option<(&'a str, &'a str)> {
    (from.device != to.device).then_some((from.device.as_str(), to.device.as_str()))
}

/// Each stream between cards takes one direction of a cable between its devices: the one
/// its `cable = "DEVICE:PORT"` names, else the first free one in file order. Streams with
/// an explicit cable are placed first, so a later explicit choice is not taken by an
/// earlier stream's automatic one.
fn assign_cables(dep: &Deployment, app: &mut HlsApp, raw: &[Spanned<RawStream>]) -> Result<()> {
    let src = &dep.src;
    // direction -> line of the stream using it
    let mut taken: HashMap<(usize, String), usize> = HashMap::new();
    let order: Vec<usize> = (0..raw.len())
        .filter(|&i| raw[i].get_ref().cable.is_some())
        .chain((0..raw.len()).filter(|&i| raw[i].get_ref().cable.is_none()))
        .collect();
    for i in order {
        let s = &app.streams[i];
        let Some((a, b)) = cross(&s.from, &s.to) else {
            continue;
        };
        // cables between the two devices, as (index, end at a, end at b)
        let between: Vec<_> = dep
            .links
            .iter()
            .enumerate()
            .filter_map(|(n, l)| {
                if l.a.device == a && l.b.device == b {
                    Some((n, l.a.clone(), l.b.clone()))
                } else if l.b.device == a && l.a.device == b {
                    Some((n, l.b.clone(), l.a.clone()))
                } else {
                    None
                }
            })
            .collect();
        if between.is_empty() {
            return Err(src.at(
                &s.span,
                format!(
                    "stream {} -> {}: no cable joins {a} and {b}; add a [[link]] between a \
                     free QSFP port of each (or choose a [topology] that joins them)",
                    s.from, s.to
                ),
            ));
        }
        let chosen = match &raw[i].get_ref().cable {
            Some(c) => {
                let e = parse_end(src, c)?;
                let Some(found) = between.iter().find(|(_, x, y)| *x == e || *y == e) else {
                    return Err(src.at(
                        &c.span(),
                        format!(
                            "cable = {:?}: no cable between {a} and {b} has the end {e}; the \
                             cables between them: {}",
                            c.get_ref(),
                            between
                                .iter()
                                .map(|(_, x, y)| format!("{x} - {y}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ));
                };
                if let Some(line) = taken.get(&(found.0, found.1.to_string())) {
                    return Err(src.at(
                        &c.span(),
                        format!(
                            "cable {} -> {} already carries the stream at line {line}; a cable \
                             direction carries one stream: pick another cable or send the \
                             other way",
                            found.1, found.2
                        ),
                    ));
                }
                found.clone()
            }
            None => match between
                .iter()
                .find(|(n, x, _)| !taken.contains_key(&(*n, x.to_string())))
            {
                Some(f) => f.clone(),
                None => {
                    return Err(src.at(
                        &s.span,
                        format!(
                            "stream {} -> {}: no free cable direction from {a} to {b}: {} \
                             already carr{} streams (lines {}); add a cable between {a} and {b}",
                            s.from,
                            s.to,
                            between
                                .iter()
                                .map(|(_, x, y)| format!("{x} -> {y}"))
                                .collect::<Vec<_>>()
                                .join(", "),
                            if between.len() == 1 { "ies" } else { "y" },
                            between
                                .iter()
                                .filter_map(|(n, x, _)| taken.get(&(*n, x.to_string())))
                                .map(|l| l.to_string())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    ))
                }
            },
        };
        taken.insert((chosen.0, chosen.1.to_string()), src.line(&s.span));
        app.streams[i].cable = Some(CableDir {
            link: chosen.0,
            from: chosen.1,
            to: chosen.2,
        });
    }
    Ok(())
}
