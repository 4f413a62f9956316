//! `infer` on a replica deployment (one input and one output DMA per copy of the pipeline,
//! `dma_in_r<k>` / `dma_out_r<k>`, deploy/tool `src/replicas.rs`): image i goes to copy
//! i mod C (round robin over the C copies), every rank feeds and drains the copies whose DMAs
//! it holds, and rank 0 puts the outputs back in input order before comparing them with the
//! unpartitioned model as a single-copy run does. Whole copies only: a copy cut across cards
//! (its output DMA on another card) is refused by name.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use finn_exec::Pipeline;
use fpga_device::Device;
use mpi::collective::Root;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};

use crate::dma;
use crate::finn_cu::{stream_ports, FinnExecFactory, WordLayout};
use crate::infer::{self, InferArgs, Outcome};
use crate::link_config::stream_peer;
use crate::setup::Rank;

const TAG_COPIES: i32 = 12;

/// This device's copies: (copy index, input DMA CU, FINN CU, output DMA CU).
fn local_copies(d: &xclbin::DeviceDescription) -> Result<Vec<(usize, String, String, String)>> {
    let mut out = Vec::new();
    for k in d
        .kernels
        .iter()
        .filter(|k| k.kind == "hls" && k.kernel == "dma_in")
    {
        let Some(i) = k.cu.strip_prefix("dma_in_r").and_then(|s| s.parse().ok()) else {
            bail!(
                "device {}: input DMA {} is not one copy's (dma_in_r<k>)",
                d.device,
                k.cu
            );
        };
        let finn = stream_peer(d, &format!("{}.out", k.cu))
            .with_context(|| format!("device {}: {}.out streams nowhere", d.device, k.cu))?;
        let out_cu = format!("dma_out_r{i}");
        if d.kernel(&out_cu).is_none() {
            bail!(
                "device {}: copy {i} is cut across cards (its output DMA {out_cu} is on another \
                 card); infer runs whole copies only so far (docs/limits.md, \"Replicas\")",
                d.device
            );
        }
        out.push((i, k.cu.clone(), finn, out_cu));
    }
    out.sort();
    Ok(out)
}

/// What every rank agreed on: the copies (input DMAs over every rank), the images' count,
/// and on rank 0 the images and the reference.
pub struct Batch {
    pub copies: usize,
    pub n: usize,
    pub prepared: Option<infer::Inputs>,
}

/// Every copy's share of the images, fed and drained on the rank holding its DMAs; rank 0
/// compares the whole batch in input order.
pub fn run(
    world: &SimpleCommunicator,
    rank: &mut Rank,
    factory: Option<&Arc<FinnExecFactory>>,
    args: &InferArgs,
    timeout: Duration,
    batch: Batch,
) -> Result<Outcome> {
    let Batch {
        copies,
        n,
        prepared,
    } = batch;
    let d = rank.device.description()?.clone();
    let me = world.rank();
    if n < copies {
        return Ok(Outcome::Failed(format!(
            "infer: deployment {} has {copies} copies of the pipeline; give at least one image \
             per copy (--images {copies} or more, {n} given)",
            d.deployment
        )));
    }
    let reference = args.reference.as_ref().context("infer needs --reference")?;
    let whole = Pipeline::load(reference)?.whole()?;
    let frame = whole.frame_in_len();
    let mut flat: Vec<i64> = match &prepared {
        Some(p) => p.images.concat(),
        None => vec![0; n * frame],
    };
    world.process_at_rank(0).broadcast_into(&mut flat[..]);
    let mine = local_copies(&d)?;
    let device: &mut dyn Device = &mut *rank.device;
    crate::idle::barrier(world);
    let t0 = Instant::now();
    for (_, _, finn, _) in &mine {
        device.begin_free_running(finn)?;
    }
    let mut runs = Vec::new();
    let mut outs = Vec::new();
    for (k, dma_in, finn, dma_out) in &mine {
        let images: Vec<usize> = (*k..n).step_by(copies).collect();
        let layout = infer::output_layout(&d, finn, factory, Some(reference))?;
        let (run, out) = dma::drain(device, &d, dma_out, images.len(), layout)?;
        runs.push(run);
        let k_finn = d.kernel(finn).with_context(|| format!("no CU {finn}"))?;
        let (port, _) = stream_ports(k_finn)?;
        let in_layout = WordLayout::new(finn, port, whole.inputs()[0].dtype, frame)?;
        let packed: Vec<u8> = images
            .iter()
            .flat_map(|&i| in_layout.pack(&flat[i * frame..(i + 1) * frame]))
            .collect();
        runs.push(dma::feed(device, &d, dma_in, &packed)?);
        outs.push((*k, out));
    }
    let period = Duration::from_millis(args.sample_ms.max(1));
    let budget = timeout * (n as u32 + 10);
    infer::wait_sampling(device, runs, &[], t0, period, budget)?;
    device.end_free_running(timeout)?;
    // [copy, values, v...] per local copy, to rank 0
    let mut msg: Vec<i64> = Vec::new();
    for (k, out) in &outs {
        let values = dma::results(device, out)?;
        msg.push(*k as i64);
        msg.push(values.len() as i64);
        msg.extend(values);
    }
    let mut all = Vec::new();
    if me == 0 {
        all.push(msg);
        for r in 1..world.size() {
            all.push(
                world
                    .process_at_rank(r)
                    .receive_vec_with_tag::<i64>(TAG_COPIES)
                    .0,
            );
        }
    } else {
        world.process_at_rank(0).send_with_tag(&msg[..], TAG_COPIES);
    }
    let wall = t0.elapsed().as_secs_f64();
    let reports = infer::gather_reports(world, &d, &[], &[], &[])?;
    let Some(inputs) = prepared else {
        return Ok(Outcome::Done);
    };
    let per = whole.frame_out_len();
    let mut outputs = vec![0i64; n * per];
    let mut fed = vec![0usize; copies];
    for m in &all {
        let mut at = 0;
        while at < m.len() {
            let (k, len) = (m[at] as usize, m[at + 1] as usize);
            let values = &m[at + 2..at + 2 + len];
            for (j, f) in values.chunks(per).enumerate() {
                let i = k + j * copies;
                outputs[i * per..(i + 1) * per].copy_from_slice(f);
                fed[k] += 1;
            }
            at += 2 + len;
        }
    }
    println!(
        "infer {}: {copies} copies, images per copy (round robin): {fed:?}",
        d.deployment
    );
    // the whole's modelled and simulated figures come with the run report's (run_report)
    infer::compare_with_reference(&d, args, &inputs, &outputs, &reports, wall)
}
