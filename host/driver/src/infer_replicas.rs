//! `infer` on a replica deployment (one input and one output DMA per copy of the pipeline,
//! `dma_in_r<k>` / `dma_out_r<k>`, deploy/tool `src/replicas.rs`): image i goes to copy
//! i mod C (round robin over the C copies), every rank feeds and drains the copies whose DMAs
//! it holds, and rank 0 puts the outputs back in input order before comparing them with the
//! unpartitioned model as a single-copy run does. A copy cut across cards is fed on the card
//! of its first segment and drained on the card of its last, its segments joined by the
//! AuroraFlow links, which come up and are counted as in a one-copy run.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use finn_exec::Pipeline;
use fpga_device::Device;
use mpi::collective::Root;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::Communicator;

use crate::dma;
use crate::finn_cu::{stream_ports, FinnExecFactory, WordLayout};
use crate::infer::{self, Outcome};
use crate::link_config::stream_peer;
use crate::setup::Rank;

const TAG_COPIES: i32 = 12;

/// This device's ends of the copies: the copies it feeds (copy, input DMA CU, the FINN CU it
/// feeds) and those it drains (copy, output DMA CU, the FINN CU feeding it). A whole copy has
/// both ends here; a copy cut across cards starts on one card and ends on another, its
/// segments joined by the links (`dma_in_r<k>` and `dma_out_r<k>` on different devices).
type Ends = Vec<(usize, String, String)>;

fn copy_of(d: &xclbin::DeviceDescription, cu: &str, prefix: &str) -> Result<usize> {
    match cu.strip_prefix(prefix).and_then(|s| s.parse().ok()) {
        Some(k) => Ok(k),
        None => bail!(
            "device {}: DMA {cu} is not one copy's ({prefix}<k>)",
            d.device
        ),
    }
}

fn local_ends(d: &xclbin::DeviceDescription) -> Result<(Ends, Ends)> {
    let (mut feeds, mut drains) = (Vec::new(), Vec::new());
    for k in d.kernels.iter().filter(|k| k.kind == "hls") {
        if k.kernel == "dma_in" {
            let finn = stream_peer(d, &format!("{}.out", k.cu))
                .with_context(|| format!("device {}: {}.out streams nowhere", d.device, k.cu))?;
            feeds.push((copy_of(d, &k.cu, "dma_in_r")?, k.cu.clone(), finn));
        } else if k.kernel == "dma_out" {
            let finn = stream_peer(d, &format!("{}.in", k.cu)).with_context(|| {
                format!("device {}: nothing streams into {}.in", d.device, k.cu)
            })?;
            drains.push((copy_of(d, &k.cu, "dma_out_r")?, k.cu.clone(), finn));
        }
    }
    feeds.sort();
    drains.sort();
    Ok((feeds, drains))
}

/// What every rank agreed on: the copies (input DMAs over every rank), the images' count,
/// and on rank 0 the images and the reference.
pub struct Batch {
    pub copies: usize,
    pub n: usize,
    pub prepared: Option<infer::Inputs>,
}

/// The layout of a copy's output DMA words. Every copy, whole or the last segment of a cut
/// one, ends with the network's last layer, so its words carry the unpartitioned model's
/// output on the feeding CU's output port, whichever partition of the export the card holds
/// (a cut copy's last segment is none of them). This is what a card is driven with; in
/// simulation the CU the device opened (its own segment's export) must agree, which checks
/// it on every simulated run.
fn copy_output_layout(
    d: &xclbin::DeviceDescription,
    finn: &str,
    factory: Option<&Arc<FinnExecFactory>>,
    whole: &finn_exec::Partition,
) -> Result<WordLayout> {
    let (_, port) = stream_ports(infer::output_feeder(d, finn)?)?;
    let dtype = match whole.outputs() {
        [p] => p.dtype,
        ps => bail!(
            "the network has {} outputs; a replica deployment supports one",
            ps.len()
        ),
    };
    let layout = WordLayout::new(finn, port, dtype, whole.frame_out_len())?;
    if let Some(opened) = factory.and_then(|f| f.opened(finn)) {
        if opened.output != layout {
            bail!(
                "device {}: {finn} emits {:?}, but the network's output on its port is {:?}: \
                 the copy's last segment does not end with the network's last layer",
                d.device,
                opened.output,
                layout
            );
        }
    }
    Ok(layout)
}

/// Every copy's share of the images, fed and drained on the ranks holding its DMAs; rank 0
/// compares the whole batch in input order.
pub fn run(call: infer::Call<'_>, rank: &mut Rank, batch: Batch) -> Result<Outcome> {
    let infer::Call {
        world,
        factory,
        args,
        timeout,
    } = call;
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
    let (feeds, drains) = local_ends(&d)?;
    let device: &mut dyn Device = &mut *rank.device;
    // the links of the cut copies, up and counted as in a one-copy run
    let links = infer::link_roles(&d);
    let link_cus: Vec<String> = links.iter().map(|(c, _)| c.clone()).collect();
    infer::links_up(&*device, &d, &link_cus)?;
    crate::idle::barrier(world);
    let t0 = Instant::now();
    infer::begin_free_running(device, &d, &link_cus)?;
    let share = |k: usize| -> Vec<usize> { (k..n).step_by(copies).collect() };
    // receivers before senders: every output DMA here, then every input DMA
    let mut runs = Vec::new();
    let mut outs = Vec::new();
    for (k, dma_out, finn) in &drains {
        let layout = copy_output_layout(&d, finn, factory, &whole)?;
        let (run, out) = dma::drain(device, &d, dma_out, share(*k).len(), layout)?;
        runs.push(run);
        outs.push((*k, out));
    }
    for (k, dma_in, finn) in &feeds {
        let k_finn = d.kernel(finn).with_context(|| format!("no CU {finn}"))?;
        let (port, _) = stream_ports(k_finn)?;
        let in_layout = WordLayout::new(finn, port, whole.inputs()[0].dtype, frame)?;
        let packed: Vec<u8> = share(*k)
            .iter()
            .flat_map(|&i| in_layout.pack(&flat[i * frame..(i + 1) * frame]))
            .collect();
        runs.push(dma::feed(device, &d, dma_in, &packed)?);
    }
    let period = Duration::from_millis(args.sample_ms.max(1));
    let budget = timeout * (n as u32 + 10);
    let samples = infer::wait_sampling(device, runs, &link_cus, t0, period, budget)?;
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
    let finals = infer::counters_of(&*device, &link_cus);
    let reports = infer::gather_reports(world, &d, &links, &samples, &finals)?;
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
