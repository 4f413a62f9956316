//! Which compute units one FPGA gets, and how they are wired: an AuroraFlow kernel per used
//! QSFP port, and by `app` and role the DMA, benchmark, pass-through or FINN kernels.

use std::collections::BTreeMap;

use anyhow::{bail, Context, Result};

use crate::deployment::{App, Deployment, End, Role};
use crate::hls_app;
use crate::iodma;
use crate::kernel::{self, Kernel};
use crate::plan::{self, CutOnCable, Plan};
use crate::platform::Platform;
use crate::replicas;

#[derive(Clone, Debug)]
pub struct Cu {
    pub name: String,
    pub kernel: Kernel,
    pub slr: Option<String>,
    /// The QSFP port of an AuroraFlow CU.
    pub qsfp: Option<u32>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PortRef {
    pub cu: String,
    pub port: String,
}

impl std::fmt::Display for PortRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}", self.cu, self.port)
    }
}

#[derive(Clone, Debug)]
pub struct Stream {
    pub from: PortRef,
    pub to: PortRef,
    pub depth: Option<u32>,
}

#[derive(Clone, Debug)]
pub struct Memory {
    pub port: PortRef,
    pub bank: String,
    /// Line of the deployment file when the user chose the bank.
    pub span: Option<std::ops::Range<usize>>,
}

/// One cable end at this device.
#[derive(Clone, Debug)]
pub struct CableEnd {
    pub cu: String,
    pub port: u32,
    pub peer: End,
    pub cable_m: f64,
    pub span: std::ops::Range<usize>,
    /// The cut sent over this cable from here, and the one received.
    pub tx_cut: Option<plan::Cut>,
    pub rx_cut: Option<plan::Cut>,
    /// This device sends nothing on the cable (its tx_axis stays open).
    pub idle_tx: bool,
    pub idle_rx: bool,
}

#[derive(Clone, Debug)]
pub struct DeviceDesign {
    pub device: String,
    pub node: u32,
    pub card: u32,
    pub clock_mhz: f64,
    pub cus: Vec<Cu>,
    pub streams: Vec<Stream>,
    pub memory: Vec<Memory>,
    pub cables: Vec<CableEnd>,
}

pub struct Inputs<'a> {
    pub dep: &'a Deployment,
    pub platform: &'a Platform,
    pub device: &'a str,
    pub kernels: &'a [Kernel],
    pub plan: Option<&'a Plan>,
    /// The partition's simulation model (sim description `model`) when the FINN kernel is
    /// described from the plan.
    pub finn_model: Option<String>,
}

fn find<'k>(kernels: &'k [Kernel], name: &str, why: &str) -> Result<&'k Kernel> {
    kernels.iter().find(|k| k.name == name).with_context(|| {
        format!(
            "no --kernel description named '{name}' ({why}); given: [{}]",
            kernels
                .iter()
                .map(|k| k.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

pub(crate) fn pr(cu: &str, port: &str) -> PortRef {
    PortRef {
        cu: cu.into(),
        port: port.into(),
    }
}

fn stream(from: PortRef, to: PortRef) -> Stream {
    Stream {
        from,
        to,
        depth: None,
    }
}

pub fn aurora_cu_name(port: u32) -> String {
    format!("aurora_flow_{port}")
}

pub fn design(inp: &Inputs) -> Result<DeviceDesign> {
    let dep = inp.dep;
    let dev = dep.device(inp.device).with_context(|| {
        format!(
            "{}: device '{}' is not in the deployment (devices: {})",
            dep.src.path,
            inp.device,
            dep.device_names().join(", ")
        )
    })?;
    let mut d = DeviceDesign {
        device: dev.name.clone(),
        node: dev.node,
        card: dev.card,
        clock_mhz: dev.clock_mhz,
        cus: Vec::new(),
        streams: Vec::new(),
        memory: Vec::new(),
        cables: Vec::new(),
    };
    let cuts: Vec<CutOnCable> = match (dep.app, inp.plan) {
        (App::Finn, Some(p)) => {
            p.check_devices(dep)?;
            plan::map_cuts(dep, p)?
        }
        (App::Finn, None) => bail!(
            "{}: app finn: link-config needs --plan (the partition plan places the layers)",
            dep.src.path
        ),
        (App::Hls, _) => {
            // every mistake of the description before any note about its cables
            hls_app::check::check(dep, &dep.hls, inp.kernels)?;
            Vec::new()
        }
        _ => Vec::new(),
    };
    // Cable ends at this device; for FINN only the cables that carry a cut.
    for (port, link, peer) in dep.links_of(&dev.name) {
        let here = End {
            device: dev.name.clone(),
            port,
        };
        let tx_cut = cuts.iter().find(|c| c.from == here).map(|c| c.cut.clone());
        let rx_cut = cuts.iter().find(|c| c.to == here).map(|c| c.cut.clone());
        // The HLS app's streams on this end: a cable none uses gets no link kernel.
        let hls_use = hls_app::design::cable_use(inp, &here);
        if dep.app == App::Hls && hls_use.is_none() {
            eprintln!(
                "note: {}: cable {} - {} carries no [[stream]]; QSFP {port} of {} gets no link \
                 kernel",
                dep.src.path, link.a, link.b, dev.name
            );
            continue;
        }
        if dep.app == App::Finn && tx_cut.is_none() && rx_cut.is_none() {
            eprintln!(
                "note: {}: cable {} - {} carries no cut of the plan; QSFP {port} of {} gets no \
                 link kernel",
                dep.src.path, link.a, link.b, dev.name
            );
            continue;
        }
        let cu = aurora_cu_name(port);
        let k = find(
            inp.kernels,
            &cu,
            &format!("the link kernel of QSFP {port} of {}", dev.name),
        )?;
        if let Some(inst) = k.int_param("instance") {
            if inst != port as i64 {
                bail!(
                    "kernel {} ({}) is built for QSFP {inst}, but it is bound to QSFP {port} of {}",
                    k.name,
                    k.origin,
                    dev.name
                );
            }
        }
        let qsfp = inp.platform.qsfp(port).unwrap();
        d.cus.push(Cu {
            name: cu.clone(),
            kernel: k.clone(),
            slr: Some(qsfp.slr.clone()),
            qsfp: Some(port),
        });
        // A port looped to itself on the switch receives what it sends.
        let self_loop = peer == here;
        d.cables.push(CableEnd {
            cu,
            port,
            peer,
            cable_m: link.cable_m,
            span: link.span.clone(),
            idle_tx: (dep.app == App::Finn && tx_cut.is_none())
                || hls_use.is_some_and(|(tx, _)| tx),
            idle_rx: (dep.app == App::Finn && rx_cut.is_none() && !self_loop)
                || hls_use.is_some_and(|(_, rx)| rx),
            tx_cut,
            rx_cut,
        });
    }
    let ports: Vec<u32> = d.cables.iter().map(|c| c.port).collect();
    match (dep.app, &dev.role) {
        (App::AuroraBench, Role::Bench) => bench(&mut d, inp.kernels, &ports)?,
        (App::AuroraBench, Role::Forward) => forward(&mut d, inp.kernels, &ports)?,
        (App::Finn, _) if inp.plan.is_some_and(replicas::is_replica_plan) => {
            let bank = replicas::finn(&mut d, inp, &cuts)?;
            tie_off_idle_directions(&mut d, inp.kernels, bank)?
        }
        (App::Finn, _) => {
            finn(&mut d, inp, &cuts)?;
            crate::slr::place(&mut d, inp.plan.unwrap())
        }
        (App::Hls, _) => hls_app::design::device(&mut d, inp)?,
        (App::AuroraBench, Role::None) => unreachable!("checked when parsing"),
    }
    apply_placement(&mut d, dep)?;
    Ok(d)
}

/// AuroraFlow's test application (pc2/AuroraFlow test/cfg/aurora_flow_test_hw.cfg): a send
/// and a recv kernel per port, acknowledgements looped back per port and crossed in pair mode.
fn bench(d: &mut DeviceDesign, kernels: &[Kernel], ports: &[u32]) -> Result<()> {
    if ports.is_empty() {
        bail!("device {}: role bench needs at least one cable", d.device);
    }
    let send = find(kernels, "send", "the benchmark sender of role bench")?;
    let recv = find(kernels, "recv", "the benchmark receiver of role bench")?;
    for &p in ports {
        d.cus.push(Cu {
            name: format!("send_{p}"),
            kernel: send.clone(),
            slr: None,
            qsfp: None,
        });
    }
    for &p in ports {
        d.cus.push(Cu {
            name: format!("recv_{p}"),
            kernel: recv.clone(),
            slr: None,
            qsfp: None,
        });
    }
    for &p in ports {
        let af = aurora_cu_name(p);
        let (s, r) = (format!("send_{p}"), format!("recv_{p}"));
        d.streams
            .push(stream(pr(&af, "rx_axis"), pr(&r, "data_input")));
        d.streams
            .push(stream(pr(&s, "data_output"), pr(&af, "tx_axis")));
    }
    for &p in ports {
        let (s, r) = (format!("send_{p}"), format!("recv_{p}"));
        d.streams.push(stream(
            pr(&r, "loopback_ack_stream"),
            pr(&s, "loopback_ack_stream"),
        ));
    }
    for (i, &p) in ports.iter().enumerate() {
        // pair mode: the receiver of one port acknowledges the sender of the other port
        let other = ports[(i + 1) % ports.len()];
        d.streams.push(stream(
            pr(&format!("recv_{p}"), "pair_ack_stream"),
            pr(&format!("send_{other}"), "pair_ack_stream"),
        ));
    }
    let send_mem = send.only_m_axi()?.name.clone();
    let recv_mem = recv.only_m_axi()?.name.clone();
    let mut bank = 0;
    for (kind, port) in [("send", &send_mem), ("recv", &recv_mem)] {
        for &p in ports {
            d.memory.push(Memory {
                port: pr(&format!("{kind}_{p}"), port),
                bank: format!("HBM[{bank}]"),
                span: None,
            });
            bank += 1;
        }
    }
    Ok(())
}

/// A ring hop (pc2/AuroraFlow @ebc82a00 aurora_flow_ring_hw.cfg): what arrives on one port
/// leaves on the other, a pass-through per direction so no link kernel input stays open.
fn forward(d: &mut DeviceDesign, kernels: &[Kernel], ports: &[u32]) -> Result<()> {
    if ports != [0, 1] {
        bail!(
            "device {}: role forward passes QSFP 0 through to QSFP 1 and needs cables on both \
             (it has cables on {:?})",
            d.device,
            ports
        );
    }
    let fwd = find(kernels, "forward", "the pass-through of role forward")?;
    let input = fwd.only("axis", "in")?.name.clone();
    let output = fwd.only("axis", "out")?.name.clone();
    for (i, (rx, tx)) in [(0u32, 1u32), (1, 0)].iter().enumerate() {
        let cu = format!("forward_{i}");
        d.cus.push(Cu {
            name: cu.clone(),
            kernel: fwd.clone(),
            slr: None,
            qsfp: None,
        });
        d.streams
            .push(stream(pr(&aurora_cu_name(*rx), "rx_axis"), pr(&cu, &input)));
        d.streams.push(stream(
            pr(&cu, &output),
            pr(&aurora_cu_name(*tx), "tx_axis"),
        ));
    }
    Ok(())
}

/// The DMA (`top`, stream port `dir`) for the FINN CU's port `finn_port`, at the width
/// finn-plus's InsertIODMA would give it (`iodma`). Named by its v++ kernel, so the link
/// config says `nk=dma_out:...` whichever width variant was built.
pub(crate) fn io_dma(
    kernels: &[Kernel],
    fk: &Kernel,
    finn_port: &str,
    top: &str,
    dir: &str,
) -> Result<Kernel> {
    let port = fk
        .port(finn_port)
        .with_context(|| format!("kernel {} ({}) has no port {finn_port}", fk.name, fk.origin))?;
    let width = iodma::width(&fk.name, port)?;
    Ok(iodma::kernel(kernels, top, dir, width)?.clone())
}

/// A FINN partition between DMAs and link kernels: input DMA on the device of the first
/// layer, output DMA on the device of the last, each cut on its cable.
fn finn(d: &mut DeviceDesign, inp: &Inputs, cuts: &[CutOnCable]) -> Result<()> {
    let plan = inp.plan.unwrap();
    let name = format!("finn_{}", d.device);
    let fk = match inp.kernels.iter().find(|k| k.name == name) {
        Some(k) => k.clone(),
        None => kernel::finn_partition(plan, &d.device, cuts, inp.finn_model.clone())?,
    };
    let first = plan.first_device() == Some(d.device.as_str());
    let last = plan.last_device() == Some(d.device.as_str());
    let mut bank = 0;
    let mut ins = 0;
    if first {
        let dma = io_dma(inp.kernels, &fk, "s_axis_0", "dma_in", "out")?;
        let out = dma.only("axis", "out")?.name.clone();
        let mem = dma.only_m_axi()?.name.clone();
        d.cus.push(Cu {
            name: "dma_in_0".into(),
            kernel: dma.clone(),
            slr: None,
            qsfp: None,
        });
        d.streams.push(stream(
            pr("dma_in_0", &out),
            pr(&name, &format!("s_axis_{ins}")),
        ));
        d.memory.push(Memory {
            port: pr("dma_in_0", &mem),
            bank: format!("HBM[{bank}]"),
            span: None,
        });
        bank += 1;
        ins += 1;
    }
    for c in cuts.iter().filter(|c| c.cut.to_device == d.device) {
        d.streams.push(stream(
            pr(&aurora_cu_name(c.to.port), "rx_axis"),
            pr(&name, &format!("s_axis_{ins}")),
        ));
        ins += 1;
    }
    let mut outs = 0;
    for c in cuts.iter().filter(|c| c.cut.from_device == d.device) {
        d.streams.push(stream(
            pr(&name, &format!("m_axis_{outs}")),
            pr(&aurora_cu_name(c.from.port), "tx_axis"),
        ));
        outs += 1;
    }
    d.cus.push(Cu {
        name: name.clone(),
        kernel: fk.clone(),
        slr: None,
        qsfp: None,
    });
    if last {
        let dma = io_dma(inp.kernels, &fk, &format!("m_axis_{outs}"), "dma_out", "in")?;
        let input = dma.only("axis", "in")?.name.clone();
        let mem = dma.only_m_axi()?.name.clone();
        d.cus.push(Cu {
            name: "dma_out_0".into(),
            kernel: dma.clone(),
            slr: None,
            qsfp: None,
        });
        d.streams.push(stream(
            pr(&name, &format!("m_axis_{outs}")),
            pr("dma_out_0", &input),
        ));
        d.memory.push(Memory {
            port: pr("dma_out_0", &mem),
            bank: format!("HBM[{bank}]"),
            span: None,
        });
        bank += 1;
    }
    tie_off_idle_directions(d, inp.kernels, bank)
}

/// A FINN cut uses one direction of its duplex cable; v++ rejects the dangling AXI-Stream
/// ports of the other (FINN+ 1.6.1 parks dummy kernels there): a `tie_off_source_<p>` drives
/// the link kernel's unused `tx_axis`, a `tie_off_sink_<p>` drains and counts its unused
/// `rx_axis` (count in HBM from `first_bank` on).
pub(crate) fn tie_off_idle_directions(
    d: &mut DeviceDesign,
    kernels: &[Kernel],
    first_bank: u32,
) -> Result<()> {
    let mut bank = first_bank;
    let idle: Vec<(u32, bool, bool)> = d
        .cables
        .iter()
        .map(|c| (c.port, c.idle_tx, c.idle_rx))
        .collect();
    for (port, idle_tx, idle_rx) in idle {
        let af = aurora_cu_name(port);
        if idle_tx {
            let k = find(
                kernels,
                "tie_off_source",
                &format!("the tie-off of the unused tx_axis of {af}"),
            )?;
            let out = k.only("axis", "out")?.name.clone();
            let cu = format!("tie_off_source_{port}");
            d.cus.push(Cu {
                name: cu.clone(),
                kernel: k.clone(),
                slr: None,
                qsfp: None,
            });
            d.streams.push(stream(pr(&cu, &out), pr(&af, "tx_axis")));
        }
        if idle_rx {
            let k = find(
                kernels,
                "tie_off_sink",
                &format!("the tie-off of the unused rx_axis of {af}"),
            )?;
            let input = k.only("axis", "in")?.name.clone();
            let mem = k.only_m_axi()?.name.clone();
            let cu = format!("tie_off_sink_{port}");
            d.cus.push(Cu {
                name: cu.clone(),
                kernel: k.clone(),
                slr: None,
                qsfp: None,
            });
            d.streams.push(stream(pr(&af, "rx_axis"), pr(&cu, &input)));
            d.memory.push(Memory {
                port: pr(&cu, &mem),
                bank: format!("HBM[{bank}]"),
                span: None,
            });
            bank += 1;
        }
    }
    Ok(())
}

/// The deployment's own SLR and memory choices for this device's CUs.
fn apply_placement(d: &mut DeviceDesign, dep: &Deployment) -> Result<()> {
    let dev = dep.device(&d.device).unwrap();
    let names: Vec<String> = d.cus.iter().map(|c| c.name.clone()).collect();
    for (cu, (slr, span)) in &dev.slr {
        let c = d.cus.iter_mut().find(|c| &c.name == cu).ok_or_else(|| {
            dep.src.at(
                span,
                format!(
                    "slr: device {} has no CU '{cu}' (its CUs: {})",
                    d.device,
                    names.join(", ")
                ),
            )
        })?;
        c.slr = Some(slr.clone());
    }
    let mut overrides: BTreeMap<String, (String, std::ops::Range<usize>)> = BTreeMap::new();
    for (key, (bank, span)) in &dev.memory {
        let (cu, port) = key.split_once('.').ok_or_else(|| {
            dep.src
                .at(span, format!("memory key '{key}' is not CU.PORT"))
        })?;
        let c = d.cus.iter().find(|c| c.name == cu).ok_or_else(|| {
            dep.src.at(
                span,
                format!(
                    "memory: device {} has no CU '{cu}' (its CUs: {})",
                    d.device,
                    names.join(", ")
                ),
            )
        })?;
        match c.kernel.port(port) {
            Some(p) if p.kind == "m_axi" => {}
            _ => {
                return Err(dep
                    .src
                    .at(span, format!("memory: CU {cu} has no m_axi port '{port}'")))
            }
        }
        overrides.insert(key.clone(), (bank.clone(), span.clone()));
    }
    for m in &mut d.memory {
        if let Some((bank, span)) = overrides.remove(&m.port.to_string()) {
            m.bank = bank;
            m.span = Some(span);
        }
    }
    for (key, (bank, span)) in overrides {
        let (cu, port) = key.split_once('.').unwrap();
        d.memory.push(Memory {
            port: pr(cu, port),
            bank,
            span: Some(span),
        });
    }
    Ok(())
}
