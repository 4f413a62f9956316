//! The FINN partition kernel the tool describes itself from the plan. Kernel descriptions
//! (`kernel.json`) are read through their one type, `device_desc::Kernel`.

use anyhow::{Context, Result};
use serde_json::{Map, Value};

pub use device_desc::{padded, Kernel, Port};

use crate::plan::{CutOnCable, Plan};

/// A FINN stream port: TDATA padded to whole bytes, `stream_bits`, FINN's unpadded
/// stream width (elements per cycle x element bits), which tells the simulated partition
/// how many values each word packs, and `frame_bits`, one frame of its tensor (the plan's;
/// absent from older plans), which with the width gives the words per frame.
pub(crate) fn finn_stream(
    name: &str,
    dir: &str,
    bits: u64,
    frame_bits: Option<u64>,
) -> Result<Port> {
    let mut p = Port::new(name, "axis", dir, padded(bits));
    p.extra.insert("stream_bits".into(), Value::from(bits));
    if let Some(frame) = frame_bits.filter(|&f| f > 0) {
        if bits == 0 || !frame.is_multiple_of(bits) {
            anyhow::bail!(
                "FINN port {name}: a frame of {frame} bits is not a whole number of {bits}-bit \
                 stream words; the plan's stream width and frame size disagree (regenerate it)"
            );
        }
        p.extra.insert("frame_bits".into(), Value::from(frame));
    }
    Ok(p)
}

/// The stream interface FINN gives a stitched partition: `s_axis_<i>` in, `m_axis_<j>` out
/// (FINN+ link configs: `sc=<sdp>.m_axis_0:aurora_flow_<n>.tx_axis`).
pub fn finn_partition(
    plan: &Plan,
    device: &str,
    cuts: &[CutOnCable],
    model: Option<String>,
) -> Result<Kernel> {
    let dp = plan
        .device(device)
        .with_context(|| format!("{}: the plan places nothing on device {device}", plan.path))?;
    let (first, last) = match (dp.layers.first(), dp.layers.last()) {
        (Some(f), Some(l)) => (f.clone(), l.clone()),
        _ => anyhow::bail!(
            "{}: device {device} has no layers in the plan; a deployment device without a \
             partition cannot be linked",
            plan.path
        ),
    };
    let layer = |name: &str| plan.layers.iter().find(|l| l.name == name);
    let mut ports = vec![
        Port::new("ap_clk", "clock", "in", 1),
        Port::new("ap_rst_n", "reset", "in", 1),
    ];
    let mut ins = 0;
    if plan.first_device() == Some(device) {
        let l = layer(&plan.layers[0].name).unwrap();
        let w = l.in_stream_bits.with_context(|| {
            format!(
                "{}: layer {} has no in_stream_bits; regenerate the plan with this \
                 project's finn-partition (it records stream widths per layer)",
                plan.path, l.name
            )
        })?;
        ports.push(finn_stream(
            &format!("s_axis_{ins}"),
            "in",
            w,
            l.in_bits_per_frame,
        )?);
        ins += 1;
    }
    for c in cuts.iter().filter(|c| c.cut.to_device == device) {
        ports.push(finn_stream(
            &format!("s_axis_{ins}"),
            "in",
            c.cut.stream_bits,
            Some(c.cut.bits_per_frame),
        )?);
        ins += 1;
    }
    let mut outs = 0;
    for c in cuts.iter().filter(|c| c.cut.from_device == device) {
        ports.push(finn_stream(
            &format!("m_axis_{outs}"),
            "out",
            c.cut.stream_bits,
            Some(c.cut.bits_per_frame),
        )?);
        outs += 1;
    }
    if plan.last_device() == Some(device) {
        let l = plan.layers.last().unwrap();
        let w = l.out_stream_bits.with_context(|| {
            format!(
                "{}: layer {} has no out_stream_bits; regenerate the plan with this \
                 project's finn-partition (it records stream widths per layer)",
                plan.path, l.name
            )
        })?;
        ports.push(finn_stream(
            &format!("m_axis_{outs}"),
            "out",
            w,
            l.out_bits_per_frame,
        )?);
    }
    Ok(finn_kernel(
        format!("finn_{device}"),
        first,
        last,
        dp.layers.len(),
        model,
        ports,
        format!("{} (device {device})", plan.path),
    ))
}

/// A FINN partition's kernel (`ap_ctrl_none`, FINN builds it): its span of layers in `params`,
/// as a device's partition and a replica's segment both describe it.
pub fn finn_kernel(
    name: String,
    first_layer: String,
    last_layer: String,
    layers: usize,
    model: Option<String>,
    ports: Vec<Port>,
    origin: String,
) -> Kernel {
    let mut params = Map::new();
    params.insert("first_layer".into(), Value::String(first_layer));
    params.insert("last_layer".into(), Value::String(last_layer));
    params.insert("layers".into(), Value::from(layers));
    Kernel {
        name,
        kind: "finn".into(),
        toolchain: None,
        control: Some("ap_ctrl_none".into()),
        xo: None,
        model,
        params,
        ports,
        extra: Map::new(),
        origin,
    }
}
