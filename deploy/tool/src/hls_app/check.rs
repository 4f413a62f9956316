//! The HLS app against the kernels' `kernel.json`: every CU's kernel among the deployment's
//! kernels, scalar defaults and memory keys naming arguments of the right kind, stream ends
//! that are stream ports of the right direction and of widths a whole-byte width converter
//! can join, and no stream input left open. Checked for the whole description at every
//! device's link step, so every device's build names the same first error, at its line.

use anyhow::Result;
use serde_json::Value;

use super::{HlsApp, HlsCu, HlsStream, StreamEnd};
use crate::deployment::Deployment;
use crate::instances::aurora_cu_name;
use crate::kernel::{Kernel, Port};

/// The argument list of an HLS kernel (`params.args` of its kernel.json).
pub fn args<'k>(k: &'k Kernel, kind: &str) -> Vec<&'k Value> {
    k.params
        .get("args")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter(|x| x["kind"] == kind).collect())
        .unwrap_or_default()
}

fn names(args: &[&Value]) -> String {
    let n: Vec<&str> = args.iter().filter_map(|a| a["name"].as_str()).collect();
    if n.is_empty() {
        "none".into()
    } else {
        n.join(", ")
    }
}

/// The kernel of a CU, or an error at its `kernel =` line listing the deployment's kernels.
pub fn kernel_of<'k>(dep: &Deployment, kernels: &'k [Kernel], cu: &HlsCu) -> Result<&'k Kernel> {
    kernels.iter().find(|k| k.name == cu.kernel).ok_or_else(|| {
        dep.src.at(
            &cu.kernel_span,
            format!(
                "CU {}: kernel {:?} is not among the deployment's kernels [{}]; add its \
                 hls_kernel target to the fpga_deployment's kernels or fix the name",
                cu.cu,
                cu.kernel,
                kernels
                    .iter()
                    .map(|k| k.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )
    })
}

pub fn check(dep: &Deployment, app: &HlsApp, kernels: &[Kernel]) -> Result<()> {
    for cu in &app.cus {
        let k = kernel_of(dep, kernels, cu)?;
        let scalars = args(k, "scalar");
        for (name, _, span) in &cu.scalars {
            if !scalars.iter().any(|a| a["name"] == name.as_str()) {
                return Err(dep.src.at(
                    span,
                    format!(
                        "CU {}: kernel {} has no scalar argument {name} (its scalars: {})",
                        cu.cu,
                        k.name,
                        names(&scalars)
                    ),
                ));
            }
        }
        let memory = args(k, "memory");
        for (name, _, span) in &cu.memory {
            if !memory.iter().any(|a| a["name"] == name.as_str()) {
                return Err(dep.src.at(
                    span,
                    format!(
                        "CU {}: kernel {} has no m_axi argument {name} (its m_axi arguments: {})",
                        cu.cu,
                        k.name,
                        names(&memory)
                    ),
                ));
            }
        }
    }
    for s in &app.streams {
        let a = stream_port(dep, app, kernels, &s.from, &s.from_span)?;
        let b = stream_port(dep, app, kernels, &s.to, &s.to_span)?;
        if a.dir != "out" {
            return Err(dep.src.at(
                &s.from_span,
                format!(
                    "from = {}: that port is an input; `from` is the output that sends \
                     (swap from and to)",
                    s.from
                ),
            ));
        }
        if b.dir != "in" {
            return Err(dep.src.at(
                &s.to_span,
                format!(
                    "to = {}: that port is an output; `to` is the input that receives \
                     (swap from and to)",
                    s.to
                ),
            ));
        }
        check_widths(dep, kernels, s, a, b)?;
    }
    for cu in &app.cus {
        let k = kernel_of(dep, kernels, cu)?;
        for p in k.ports.iter().filter(|p| p.kind == "axis" && p.dir == "in") {
            let driven = app
                .streams
                .iter()
                .any(|s| s.to.device == cu.device && s.to.cu == cu.cu && s.to.port == p.name);
            if !driven {
                return Err(dep.src.at(
                    &cu.span,
                    format!(
                        "CU {} on {}: its input stream {} is not connected (v++ rejects an \
                         open AXI4-Stream input); add a [[stream]] with to = \"{}.{}.{}\"",
                        cu.cu, cu.device, p.name, cu.device, cu.cu, p.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

fn stream_port<'k>(
    dep: &Deployment,
    app: &HlsApp,
    kernels: &'k [Kernel],
    e: &StreamEnd,
    span: &std::ops::Range<usize>,
) -> Result<&'k Port> {
    let cu = app
        .cu(&e.device, &e.cu)
        .expect("ends are checked when parsed");
    let k = kernel_of(dep, kernels, cu)?;
    match k.port(&e.port) {
        Some(p) if p.kind == "axis" => Ok(p),
        _ => Err(dep.src.at(
            span,
            format!(
                "{e}: CU {} (kernel {}) has no stream port {}; its stream ports: {}",
                e.cu,
                k.name,
                e.port,
                k.ports
                    .iter()
                    .filter(|p| p.kind == "axis")
                    .map(|p| format!("{} ({}, {} bits)", p.name, p.dir, p.width))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    }
}

/// Equal widths, or both whole bytes (an AXI4-Stream data width converter, as on FINN's
/// streams). Between cards each end meets its link kernel's port.
fn check_widths(
    dep: &Deployment,
    kernels: &[Kernel],
    s: &HlsStream,
    a: &Port,
    b: &Port,
) -> Result<()> {
    let joinable =
        |x: u64, y: u64| x == y || (x > 0 && y > 0 && x.is_multiple_of(8) && y.is_multiple_of(8));
    let pairs: Vec<(u64, u64, String)> = match &s.cable {
        None => vec![(a.width, b.width, format!("{}", s.to))],
        Some(c) => {
            let link = |port: u32, name: &str| {
                kernels
                    .iter()
                    .find(|k| k.name == aurora_cu_name(port))
                    .and_then(|k| k.port(name))
                    .map(|p| p.width)
            };
            let mut v = Vec::new();
            if let Some(w) = link(c.from.port, "tx_axis") {
                v.push((a.width, w, format!("the link's tx_axis at {}", c.from)));
            }
            if let Some(w) = link(c.to.port, "rx_axis") {
                v.push((w, b.width, format!("{} (from the link's rx_axis)", s.to)));
            }
            v
        }
    };
    for (x, y, what) in pairs {
        if !joinable(x, y) {
            return Err(dep.src.at(
                &s.span,
                format!(
                    "stream {} -> {}: width mismatch, {x} bits into {what} of {y} bits; a \
                     width converter needs whole bytes on both sides (AXI4-Stream TDATA): make \
                     the kernel's stream a multiple of 8 bits",
                    s.from, s.to
                ),
            ));
        }
    }
    Ok(())
}
