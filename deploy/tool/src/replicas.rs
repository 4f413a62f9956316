//! A replica plan (`finn-partition --replicas`, finn/README.md "Replicas") on one device:
//! every copy of the pipeline with a segment here gets its own FINN CU, and each copy its
//! own input DMA where it starts and output DMA where it ends, so the host feeds and drains
//! the copies independently. A copy cut across cards hands its stream to the next card over
//! the cable at the ports the plan names; a whole copy needs no cable.
//!
//! All copies share one folding, so segments spanning the same layers are one kernel with
//! several CUs (v++ `nk=<kernel>:<n>:<cu>,...`): `finn_whole` for a whole copy, else
//! `finn_<first layer>__<last layer>`. CUs are `finn_r<copy>`, `dma_in_r<copy>`,
//! `dma_out_r<copy>`. A plan without `replicas` never reaches this module (the single-copy
//! path is unchanged, byte for byte).

use anyhow::{bail, Context, Result};
use serde_json::{Map, Value};

use crate::deployment::{Deployment, End};
use crate::instances::{aurora_cu_name, pr, Cu, DeviceDesign, Inputs, Memory, Stream};
use crate::kernel::{self, Kernel};
use crate::plan::{self, CutOnCable, Plan};

// A plan's copies, read with the partitioner's own types (one definition of the format).
pub use finn_partitioner::replica_plan::{
    ReplicaCut, ReplicaPlan as Replica, SegmentPlan as Segment,
};

/// True when the plan asks for the replica layout (it lists its copies).
pub fn is_replica_plan(plan: &Plan) -> bool {
    !plan.replicas.is_empty()
}

/// The kernel name of a segment: one per distinct span of layers.
pub fn segment_kernel_name(plan: &Plan, seg: &Segment) -> String {
    let whole = plan.layers.first().map(|l| &l.name) == Some(&seg.first_layer)
        && plan.layers.last().map(|l| &l.name) == Some(&seg.last_layer);
    if whole {
        "finn_whole".into()
    } else {
        format!("finn_{}__{}", seg.first_layer, seg.last_layer)
    }
}

/// Every copy's cut on the cable at exactly its planned ports; a cut whose ports no cable of
/// the description joins is an error naming the copy and the description.
pub fn cuts_on_cables(dep: &Deployment, plan: &Plan) -> Result<Vec<CutOnCable>> {
    let mut out: Vec<CutOnCable> = Vec::new();
    for r in &plan.replicas {
        for c in &r.cuts {
            let from = End {
                device: c.from_device.clone(),
                port: c.from_port,
            };
            let to = End {
                device: c.to_device.clone(),
                port: c.to_port,
            };
            let link = dep
                .links
                .iter()
                .find(|l| (l.a == from && l.b == to) || (l.a == to && l.b == from));
            let Some(link) = link else {
                return Err(dep.src.at(
                    &dep.cabling_span,
                    format!(
                        "copy {} of the plan ({}) sends {} -> {} from {from} to {to}, but no \
                         cable joins those ports; partition with this description's topology \
                         (deploy-tool partitioner-inputs)",
                        r.index, plan.path, c.from_layer, c.to_layer
                    ),
                ));
            };
            if out.iter().any(|o| o.from == from) {
                bail!(
                    "{}: copy {} sends a second stream from {from}; one cable direction carries \
                     one copy's stream",
                    plan.path,
                    r.index
                );
            }
            let bits_per_frame = layer_bits(plan, &c.from_layer, false)?.1;
            out.push(CutOnCable {
                cut: plan::Cut {
                    from_layer: c.from_layer.clone(),
                    to_layer: c.to_layer.clone(),
                    from_device: c.from_device.clone(),
                    to_device: c.to_device.clone(),
                    stream_bits: c.stream_bits,
                    bits_per_frame,
                    gbps: c.gbps,
                },
                from,
                to,
                cable_m: link.cable_m,
            });
        }
    }
    Ok(out)
}

/// Every device carries part of some copy (a card with none would link an empty design).
/// A slice (`plan-slice`) answers for its own device only.
pub fn check_devices(dep: &Deployment, plan: &Plan) -> Result<()> {
    let own = |name: &str| plan.device.as_ref().is_none_or(|d| d == name);
    for dev in dep.devices.iter().filter(|d| own(&d.name)) {
        let used = plan
            .replicas
            .iter()
            .any(|r| r.segments.iter().any(|s| s.device == dev.name));
        if !used {
            return Err(dep.src.at(
                &dev.span,
                format!(
                    "device {}: the replica plan ({}) puts no copy on it; remove the card or \
                     ask for more copies (replicas)",
                    dev.name, plan.path
                ),
            ));
        }
    }
    Ok(())
}

/// What one device's link step reads of a replica plan: every device's name, this device's
/// utilisation, the copies with a segment here (their cuts name the cables), and every layer
/// with its widths (one folding for every copy, so another card's change of it changes this
/// card's kernels too).
pub fn device_slice(plan: &Plan, device: &str) -> Result<Value> {
    if plan.device(device).is_none() {
        bail!("{}: the plan has no device {device}", plan.path);
    }
    let devices: Vec<Value> = plan
        .devices
        .iter()
        .map(|d| {
            let util = if d.name == device {
                serde_json::to_value(&d.utilization)
            } else {
                Ok(Value::Object(Map::new()))
            };
            util.map(|u| serde_json::json!({"name": d.name, "layers": [], "utilization": u}))
        })
        .collect::<Result<_, _>>()?;
    let replicas: Vec<&Replica> = plan
        .replicas
        .iter()
        .filter(|r| r.segments.iter().any(|s| s.device == device))
        .collect();
    Ok(serde_json::json!({
        "format": plan::SLICE_FORMAT,
        "device": device,
        "model": plan.model,
        "devices": devices,
        "cuts": [],
        "layers": plan.layers,
        "replicas": replicas,
    }))
}

/// topology.json's `replicas`: per copy its FPS, its segments' devices and layer spans, and
/// the cables its cuts take.
pub fn topology(plan: &Plan) -> Value {
    let copies: Vec<Value> = plan
        .replicas
        .iter()
        .map(|r| {
            let segments: Vec<Value> = r
                .segments
                .iter()
                .map(|s| {
                    serde_json::json!({"device": s.device, "first_layer": s.first_layer,
                        "last_layer": s.last_layer, "kernel": segment_kernel_name(plan, s),
                        "cu": format!("finn_r{}", r.index)})
                })
                .collect();
            let cuts: Vec<Value> = r
                .cuts
                .iter()
                .map(|c| {
                    serde_json::json!({"from": format!("{}:{}", c.from_device, c.from_port),
                        "to": format!("{}:{}", c.to_device, c.to_port),
                        "from_layer": c.from_layer, "to_layer": c.to_layer,
                        "stream_bits": c.stream_bits})
                })
                .collect();
            let first = r.segments.first().map(|s| s.device.as_str());
            let last = r.segments.last().map(|s| s.device.as_str());
            serde_json::json!({"index": r.index, "fps": r.fps,
                "dma_in": {"device": first, "cu": format!("dma_in_r{}", r.index)},
                "dma_out": {"device": last, "cu": format!("dma_out_r{}", r.index)},
                "segments": segments, "cuts": cuts})
        })
        .collect();
    serde_json::json!({"fps_total": plan.fps_total, "copies": copies})
}

/// (stream bits, frame bits) on a layer's input (`input`) or output, from copy 0's layers
/// (every copy has the same folding, so the same widths).
fn layer_bits(plan: &Plan, layer: &str, input: bool) -> Result<(u64, u64)> {
    let l = plan
        .layers
        .iter()
        .find(|l| l.name == layer)
        .with_context(|| {
            format!(
                "{}: the replicas name layer {layer}, not in `layers`",
                plan.path
            )
        })?;
    let (bits, frame) = if input {
        (l.in_stream_bits, l.in_bits_per_frame)
    } else {
        (l.out_stream_bits, l.out_bits_per_frame)
    };
    match (bits, frame) {
        (Some(b), Some(f)) => Ok((b, f)),
        _ => bail!(
            "{}: layer {layer} has no stream width or frame size; regenerate the plan with this \
             project's finn-partition",
            plan.path
        ),
    }
}

/// The segment's kernel: one input `s_axis_0` (the first layer's input) and one output
/// `m_axis_0` (the last layer's output), as FINN stitches a partition.
fn segment_kernel(plan: &Plan, seg: &Segment, model: Option<String>) -> Result<Kernel> {
    let (ib, iframe) = layer_bits(plan, &seg.first_layer, true)?;
    let (ob, oframe) = layer_bits(plan, &seg.last_layer, false)?;
    let ports = vec![
        kernel::Port::new("ap_clk", "clock", "in", 1),
        kernel::Port::new("ap_rst_n", "reset", "in", 1),
        kernel::finn_stream("s_axis_0", "in", ib, Some(iframe))?,
        kernel::finn_stream("m_axis_0", "out", ob, Some(oframe))?,
    ];
    Ok(kernel::finn_kernel(
        segment_kernel_name(plan, seg),
        seg.first_layer.clone(),
        seg.last_layer.clone(),
        seg.layers.len(),
        model,
        ports,
        format!("{} (replica segment {})", plan.path, seg.first_layer),
    ))
}

/// The executor model of a segment in the export `root` (finn/flow/export_exec.py): `whole/`
/// for a whole copy, else the directory exec.json's `segments` lists for its first and last
/// layer.
fn segment_model(root: &str, seg: &Segment, kname: &str) -> Result<String> {
    if kname == "finn_whole" {
        return Ok(format!("{root}/whole"));
    }
    let listing = format!("{root}/exec.json");
    let text = std::fs::read_to_string(&listing).with_context(|| format!("reading {listing}"))?;
    let exec: Value =
        serde_json::from_str(&text).with_context(|| format!("{listing}: not JSON"))?;
    let found = exec["segments"].as_array().into_iter().flatten().find(|s| {
        s["first_layer"] == seg.first_layer.as_str() && s["last_layer"] == seg.last_layer.as_str()
    });
    match found.and_then(|s| s["dir"].as_str()) {
        Some(dir) => Ok(format!("{root}/{dir}")),
        None => bail!(
            "{listing}: no executor model of the segment {}..{} ({kname}); the export was made \
             from another plan: rebuild the deployment's partition",
            seg.first_layer,
            seg.last_layer
        ),
    }
}

/// The device's copies: a FINN CU per segment here, DMAs at each copy's ends, cuts on their
/// cables. Returns the next free HBM bank.
pub fn finn(d: &mut DeviceDesign, inp: &Inputs, cuts: &[CutOnCable]) -> Result<u32> {
    let plan = inp.plan.expect("a FINN design has a plan");
    let mut bank = 0u32;
    for r in &plan.replicas {
        let n = r.segments.len();
        for (i, seg) in r.segments.iter().enumerate() {
            if seg.device != d.device {
                continue;
            }
            let kname = segment_kernel_name(plan, seg);
            let fk = match inp.kernels.iter().find(|k| k.name == kname) {
                Some(k) => k.clone(),
                // `--finn-model` is the whole executor export (vitis_link passes its root):
                // `whole/` for a whole copy, the segment's own model for a cut copy's.
                None => {
                    let model = match &inp.finn_model {
                        Some(root) => Some(segment_model(root, seg, &kname)?),
                        None => None,
                    };
                    segment_kernel(plan, seg, model)?
                }
            };
            let cu = format!("finn_r{}", r.index);
            let input = if i == 0 {
                let dma = crate::instances::io_dma(inp.kernels, &fk, "s_axis_0", "dma_in", "out")?;
                let name = format!("dma_in_r{}", r.index);
                let out = dma.only("axis", "out")?.name.clone();
                bank = push_dma(d, &name, &dma, bank)?;
                pr(&name, &out)
            } else {
                let c = cut_into(cuts, r, &seg.first_layer, &d.device)?;
                pr(&aurora_cu_name(c.to.port), "rx_axis")
            };
            d.streams.push(Stream {
                from: input,
                to: pr(&cu, "s_axis_0"),
                depth: None,
            });
            d.cus.push(Cu {
                name: cu.clone(),
                kernel: fk.clone(),
                slr: None,
                qsfp: None,
            });
            let output = if i + 1 == n {
                let dma = crate::instances::io_dma(inp.kernels, &fk, "m_axis_0", "dma_out", "in")?;
                let name = format!("dma_out_r{}", r.index);
                let input = dma.only("axis", "in")?.name.clone();
                bank = push_dma(d, &name, &dma, bank)?;
                pr(&name, &input)
            } else {
                let c = cut_out_of(cuts, r, &seg.last_layer, &d.device)?;
                pr(&aurora_cu_name(c.from.port), "tx_axis")
            };
            d.streams.push(Stream {
                from: pr(&cu, "m_axis_0"),
                to: output,
                depth: None,
            });
        }
    }
    Ok(bank)
}

fn push_dma(d: &mut DeviceDesign, name: &str, dma: &Kernel, bank: u32) -> Result<u32> {
    let mem = dma.only_m_axi()?.name.clone();
    d.cus.push(Cu {
        name: name.into(),
        kernel: dma.clone(),
        slr: None,
        qsfp: None,
    });
    d.memory.push(Memory {
        port: pr(name, &mem),
        bank: format!("HBM[{bank}]"),
        span: None,
    });
    Ok(bank + 1)
}

fn cut_into<'c>(
    cuts: &'c [CutOnCable],
    r: &Replica,
    first_layer: &str,
    device: &str,
) -> Result<&'c CutOnCable> {
    let planned = r
        .cuts
        .iter()
        .find(|c| c.to_layer == first_layer && c.to_device == device)
        .with_context(|| {
            format!(
                "copy {}: no cut of the plan feeds its segment from {first_layer} on {device}",
                r.index
            )
        })?;
    find_cut(cuts, &planned.to_device, planned.to_port, false)
}

fn cut_out_of<'c>(
    cuts: &'c [CutOnCable],
    r: &Replica,
    last_layer: &str,
    device: &str,
) -> Result<&'c CutOnCable> {
    let planned = r
        .cuts
        .iter()
        .find(|c| c.from_layer == last_layer && c.from_device == device)
        .with_context(|| {
            format!("copy {}: no cut of the plan takes its segment's output after {last_layer} on {device}", r.index)
        })?;
    find_cut(cuts, &planned.from_device, planned.from_port, true)
}

fn find_cut<'c>(
    cuts: &'c [CutOnCable],
    device: &str,
    port: u32,
    sending: bool,
) -> Result<&'c CutOnCable> {
    cuts.iter()
        .find(|c| {
            let e = if sending { &c.from } else { &c.to };
            e.device == device && e.port == port
        })
        .with_context(|| format!("no cable end {device}:{port} carries the cut"))
}
