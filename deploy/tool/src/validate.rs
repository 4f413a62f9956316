//! Checks of one device's design before any link tool runs: stream ends, kinds, directions
//! and widths, QSFP ports, memory banks and SLRs of the platform, open inputs, the AuroraFlow
//! RX headroom per cable and the planned utilisation against the device's budget.

use std::collections::{BTreeMap, HashMap};

use anyhow::{bail, Result};

use crate::deployment::Deployment;
use crate::flow_control::{self, FlowControl};
use crate::instances::{DeviceDesign, PortRef};
use crate::kernel::Port;
use crate::plan::Plan;
use crate::platform::Platform;

/// A width converter v++ inserts on a stream (AXI4-Stream data width converter), as the
/// device description records it.
pub use device_desc::device::Converter;

#[derive(Clone, Debug, Default)]
pub struct Checked {
    /// Per stream (same order as `DeviceDesign::streams`): the converter, if widths differ.
    pub converters: Vec<Option<Converter>>,
    /// Things worth a line on stderr (converters, open outputs, skipped checks).
    pub notes: Vec<String>,
}

fn port<'d>(d: &'d DeviceDesign, r: &PortRef, role: &str, what: &str) -> Result<&'d Port> {
    let cu = d.cus.iter().find(|c| c.name == r.cu).ok_or_else(|| {
        anyhow::anyhow!(
            "device {}: stream {what}: {role} CU '{}' does not exist (CUs: {})",
            d.device,
            r.cu,
            d.cus
                .iter()
                .map(|c| c.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    cu.kernel.port(&r.port).ok_or_else(|| {
        anyhow::anyhow!(
            "device {}: stream {what}: kernel {} ({}) of CU {} has no port '{}' (ports: {})",
            d.device,
            cu.kernel.name,
            cu.kernel.origin,
            cu.name,
            r.port,
            cu.kernel
                .ports
                .iter()
                .map(|p| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

pub fn check(
    d: &DeviceDesign,
    dep: &Deployment,
    platform: &Platform,
    plan: Option<&Plan>,
    fc: Option<&FlowControl>,
) -> Result<Checked> {
    let mut out = Checked::default();
    let (driven, read) = check_streams(d, &mut out)?;
    check_connected(d, &driven, &read, &mut out)?;
    check_placement(d, dep, platform)?;
    check_rx_headroom(d, dep, fc, &mut out)?;
    if let Some(plan) = plan {
        check_budget(d, dep, plan)?;
    }
    Ok(out)
}

/// Which stream drives each sink and which reads each source (port "cu.port" -> stream).
type Ends = HashMap<String, String>;

/// Each stream: both ends AXI4-Stream ports, source an output and sink an input, each port
/// in one stream, widths equal or adaptable by a whole-byte converter (recorded in `out`).
fn check_streams(d: &DeviceDesign, out: &mut Checked) -> Result<(Ends, Ends)> {
    let mut driven: Ends = HashMap::new();
    let mut read: Ends = HashMap::new();
    for s in &d.streams {
        let what = format!("{} -> {}", s.from, s.to);
        let a = port(d, &s.from, "source", &what)?;
        let b = port(d, &s.to, "sink", &what)?;
        for (p, r) in [(a, &s.from), (b, &s.to)] {
            if p.kind != "axis" {
                bail!(
                    "device {}: stream {what}: {r} is a {} port, not an AXI4-Stream (axis)",
                    d.device,
                    p.kind
                );
            }
        }
        if a.dir != "out" {
            bail!(
                "device {}: stream {what}: source {} is an input (dir {}); swap the ends",
                d.device,
                s.from,
                a.dir
            );
        }
        if b.dir != "in" {
            bail!(
                "device {}: stream {what}: sink {} is not an input (dir {}); swap the ends",
                d.device,
                s.to,
                b.dir
            );
        }
        if let Some(prev) = read.insert(s.from.to_string(), what.clone()) {
            bail!(
                "device {}: {} feeds two streams ({prev} and {what}); AXI4-Stream is point to point",
                d.device,
                s.from
            );
        }
        if let Some(prev) = driven.insert(s.to.to_string(), what.clone()) {
            bail!(
                "device {}: {} is driven by two streams ({prev} and {what})",
                d.device,
                s.to
            );
        }
        if a.width == b.width {
            out.converters.push(None);
        } else if a.width.is_multiple_of(8)
            && b.width.is_multiple_of(8)
            && a.width > 0
            && b.width > 0
        {
            check_whole_words(d, &what, a, b)?;
            out.notes.push(format!(
                "device {}: width converter {} -> {} bits on {what}",
                d.device, a.width, b.width
            ));
            out.converters.push(Some(Converter {
                from_width: a.width,
                to_width: b.width,
            }));
        } else {
            bail!(
                "device {}: stream {what}: width mismatch, {} is {} bits and {} is {} bits; a \
                 width converter needs whole bytes on both sides (AXI4-Stream TDATA); fix the \
                 kernel's stream width",
                d.device,
                s.from,
                a.width,
                s.to,
                b.width
            );
        }
    }
    Ok((driven, read))
}

fn check_connected(d: &DeviceDesign, driven: &Ends, read: &Ends, out: &mut Checked) -> Result<()> {
    // Every stream input must be driven (v++ rejects a dangling AXI-Stream input); the unused
    // direction of a FINN cable is driven by its tie-off kernel.
    for cu in &d.cus {
        for p in cu.kernel.ports.iter().filter(|p| p.kind == "axis") {
            let key = format!("{}.{}", cu.name, p.name);
            if p.dir == "in" && !driven.contains_key(&key) {
                bail!(
                    "device {}: input {key} (kernel {}, {}) is not connected to any stream",
                    d.device,
                    cu.kernel.name,
                    cu.kernel.origin
                );
            }
            if p.dir == "out" && !read.contains_key(&key) {
                out.notes
                    .push(format!("device {}: output {key} is not read", d.device));
            }
        }
    }
    Ok(())
}

/// QSFP ports, memory banks and SLRs the platform has.
fn check_placement(d: &DeviceDesign, dep: &Deployment, platform: &Platform) -> Result<()> {
    // QSFP ports: one link kernel each, and only ports the platform has.
    let mut qsfp: HashMap<u32, &str> = HashMap::new();
    for cu in &d.cus {
        if let Some(p) = cu.qsfp {
            if platform.qsfp(p).is_none() {
                bail!(
                    "device {}: CU {}: platform has no QSFP {p}",
                    d.device,
                    cu.name
                );
            }
            if let Some(prev) = qsfp.insert(p, &cu.name) {
                bail!(
                    "device {}: QSFP {p} is bound to two link kernels, {prev} and {}",
                    d.device,
                    cu.name
                );
            }
        }
    }
    for m in &d.memory {
        if let Err(e) = platform.check_bank(&m.bank) {
            match &m.span {
                Some(span) => return Err(dep.src.at(span, format!("{}: {e}", m.port))),
                None => bail!("device {}: {}: {e}", d.device, m.port),
            }
        }
    }
    let dev = dep.device(&d.device).unwrap();
    for cu in &d.cus {
        if let Some(slr) = &cu.slr {
            if let Err(e) = platform.check_slr(slr) {
                match dev.slr.get(&cu.name) {
                    Some((_, span)) => {
                        return Err(dep.src.at(span, format!("CU {}: {e}", cu.name)))
                    }
                    None => bail!("device {}: CU {}: {e}", d.device, cu.name),
                }
            }
        }
    }
    Ok(())
}

/// The AuroraFlow RX headroom per cable: what is in flight after an XOFF fits above
/// prog_full (`[flow_control]` of the AuroraFlow kernel description).
fn check_rx_headroom(
    d: &DeviceDesign,
    dep: &Deployment,
    fc: Option<&FlowControl>,
    out: &mut Checked,
) -> Result<()> {
    match fc {
        Some(fc) => {
            for c in &d.cables {
                let k = &d.cus.iter().find(|cu| cu.name == c.cu).unwrap().kernel;
                let have = flow_control::headroom_beats(k, fc)?;
                let need = flow_control::need_beats(fc, c.cable_m);
                if have < need {
                    return Err(dep.src.at(
                        &c.span,
                        format!(
                            "cable {}:{} - {} ({} m): the RX FIFO of {} ({}) holds {have} link \
                             beats above prog_full, but {need} are in flight after an XOFF \
                             ({} + {} x {} m); raise rx_fifo_size, lower rx_fifo_prog_full or \
                             shorten the cable",
                            d.device,
                            c.port,
                            c.peer,
                            c.cable_m,
                            k.name,
                            k.origin,
                            fc.fixed_inflight_beats,
                            fc.beats_per_metre,
                            c.cable_m
                        ),
                    ));
                }
            }
        }
        None => out.notes.push(format!(
            "device {}: RX headroom per cable not checked: no [flow_control] table in the \
             AuroraFlow kernel description (pass --flow-control hw/aurora_flow/kernel.toml)",
            d.device
        )),
    }
    Ok(())
}

/// A width converter (v++'s AXI4-Stream data width converter) emits an output word only
/// when it has all of its bytes, and FINN's streams have no TLAST to push out a partial one:
/// if a frame is not a whole number of output words, the bytes after the last whole word of
/// a run stay in the converter and its consumer (the next partition, the link, the output
/// DMA) waits for them for ever on a card. The frame size is that of the FINN port at
/// either end.
fn check_whole_words(d: &DeviceDesign, what: &str, from: &Port, to: &Port) -> Result<()> {
    let Some(frame) = from.frame_bytes().or_else(|| to.frame_bytes()) else {
        return Ok(());
    };
    let word = to.width / 8;
    if !frame.is_multiple_of(word) {
        bail!(
            "device {}: stream {what}: a frame is {frame} B, not a whole number of the width \
             converter's {word} B output words ({} -> {} bits): after one image it holds {} B \
             (after any image count that is not a multiple of {}), and as FINN's streams carry \
             no TLAST the consumer waits for the rest for ever on a card; choose a folding \
             whose stream packs a frame into whole {}-bit words",
            d.device,
            from.width,
            to.width,
            frame % word,
            word / gcd(frame, word),
            to.width
        );
    }
    Ok(())
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// The partitioner plans within the budget it was given; this catches a plan made for other
/// budgets than the deployment's (or a tightened budget).
fn check_budget(d: &DeviceDesign, dep: &Deployment, plan: &Plan) -> Result<()> {
    let dev = dep.device(&d.device).unwrap();
    let Some(dp) = plan.device(&d.device) else {
        return Ok(());
    };
    let over: BTreeMap<&String, (f64, f64)> = dp
        .utilization
        .iter()
        .filter_map(|(r, &u)| {
            let cap = dev.max_util.get(r).copied().unwrap_or(1.0);
            (u > cap + 1e-9).then_some((r, (u, cap)))
        })
        .collect();
    // A floor (min_util) the plan does not reach: a plan made before the floor was set.
    let under = dev.min_util.iter().find_map(|(r, &floor)| {
        let u = dp.utilization.get(r).copied().unwrap_or(0.0);
        (u < floor - 1e-9).then_some((r, u, floor))
    });
    if let Some((r, u, floor)) = under {
        return Err(dep.src.at(
            &dev.min_util_span,
            format!(
                "device {}: the plan ({}) uses {:.1} % of its {r}, under its floor (min_util) \
                 of {:.1} %; re-partition with this floor or lower min_util",
                d.device,
                plan.path,
                u * 100.0,
                floor * 100.0
            ),
        ));
    }
    if let Some((r, (u, cap))) = over.into_iter().next() {
        return Err(dep.src.at(
            &dev.max_util_span,
            format!(
                "device {}: the plan ({}) uses {:.1} % of its {r}, over its budget of {:.1} %; \
                 re-partition with this budget or raise max_util",
                d.device,
                plan.path,
                u * 100.0,
                cap * 100.0
            ),
        ));
    }
    Ok(())
}
