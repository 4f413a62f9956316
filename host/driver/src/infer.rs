//! `infer --images N`: images through the deployment's FINN pipeline, on the cards or the
//! simulated devices by the same calls (`fpga_device::Device`): rank 0 writes them to HBM and starts the input DMA, the frames
//! flow through each device's FINN CU and the AuroraFlow links (width converters as the link
//! configuration inserts them), the rank with the output DMA reads the results from HBM and
//! sends them to rank 0, which compares them with the unpartitioned model (`whole/` of the
//! plan's executor export) and writes `outputs.npy` and `run.json`.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use aurora::AuroraFlow;
use finn_exec::frames::{self, Rng};
use finn_exec::{npy, Partition, Pipeline, Port};
use fpga_device::{CuRegisters, Device, RunId};
use mpi::collective::CommunicatorCollectives;
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use xclbin::{DeviceDescription, KernelEntry};

use crate::dma::{self, OutBuffer};
use crate::finn_cu::{stream_ports, FinnExecFactory, WordLayout};
use crate::gather;
use crate::infer_report::{self, LinkSample, RankReport, Run};
pub use crate::infer_report::{Outcome, ReportInputs};
use crate::link_config::stream_peer;
use crate::progress;
use crate::setup::{wait_runs, Rank};

pub struct InferArgs {
    pub images: Option<u32>,
    pub input: Option<PathBuf>,
    /// The true classes of the --input images (`labels.rs`).
    pub labels: Option<PathBuf>,
    pub seed: u64,
    pub out: PathBuf,
    /// The plan's executor export (exec.json, whole/).
    pub reference: Option<PathBuf>,
    /// What the run report needs besides run.json and the reference (None: no report).
    pub report: Option<ReportInputs>,
    pub progress: bool,
    pub sample_ms: u64,
}

const TAG_OUTPUTS: i32 = 11;

fn hls_cu<'a>(d: &'a DeviceDescription, kernel: &str) -> Option<&'a xclbin::KernelEntry> {
    d.kernels
        .iter()
        .find(|k| k.kind == "hls" && k.kernel == kernel)
}

/// The memory bank of `cu`'s m_axi port.
/// Rank 0's part before anything runs: the reference and the images.
pub(crate) struct Inputs {
    whole: Partition,
    whole_dir: PathBuf,
    pub(crate) images: Vec<Vec<i64>>,
    /// One class per image, from --labels.
    labels: Option<Vec<i64>>,
}

fn read_images(path: &Path, port: &Port) -> Result<Vec<Vec<i64>>> {
    let shown = path.display();
    let a = npy::read(path).with_context(|| format!("--input {shown}"))?;
    let data = a.integers(&format!("--input {shown} ({})", a.descr))?;
    // frames::split's own message names the tensor, not the file: say it with the file.
    let frames = frames::split(port, &a.shape, data).map_err(|_| {
        anyhow::anyhow!(
            "--input {shown}: shape {:?} ({}) does not fit the model input {:?} ({}): expected {:?} or [N, {}]",
            a.shape,
            a.descr,
            port.shape,
            port.dtype,
            port.shape,
            port.frame_dims()
        )
    })?;
    for (f, t) in frames.iter().enumerate() {
        if let Some((i, v)) = t
            .data
            .iter()
            .enumerate()
            .find(|(_, &v)| !port.dtype.allows(v as i64))
        {
            bail!(
                "--input {shown}: image {f}, value {v} at flat index {i} is outside the model input's datatype {} ({}): the file holds {} values",
                port.dtype,
                port.name,
                a.descr
            );
        }
    }
    Ok(frames
        .into_iter()
        .map(|t| t.data.into_iter().map(i64::from).collect())
        .collect())
}

fn prepare(args: &InferArgs) -> Result<Inputs> {
    let reference = args.reference.as_ref().context(
        "infer needs the unpartitioned reference: --reference EXEC_DIR (the partition plan's exec/ directory; the deployment's run.sh passes it)",
    )?;
    let pipeline = Pipeline::load(reference)
        .with_context(|| format!("--reference {}", reference.display()))?;
    let whole = pipeline.whole()?;
    let whole_dir = whole.dir.clone();
    let port = match whole.inputs() {
        [p] => p.clone(),
        ps => bail!(
            "{}: the model has {} inputs; infer feeds one",
            whole_dir.display(),
            ps.len()
        ),
    };
    let mut labels = None;
    let images = match &args.input {
        Some(path) => {
            let all = read_images(path, &port)?;
            let take = args
                .images
                .map_or(all.len(), |n| (n as usize).min(all.len()));
            if let Some(l) = &args.labels {
                labels = Some(crate::labels::read(l, take, all.len())?);
            }
            match args.images {
                Some(n) if n as usize > all.len() => bail!(
                    "--input {} holds {} images, --images asks for {n}",
                    path.display(),
                    all.len()
                ),
                Some(n) => all.into_iter().take(n as usize).collect(),
                None => all,
            }
        }
        None => {
            if let Some(l) = &args.labels {
                bail!(
                    "--labels {}: labels need the images they label; give them with --input",
                    l.display()
                );
            }
            let n = args.images.unwrap_or(8);
            let mut rng = Rng::new(args.seed);
            (0..n)
                .map(|_| rng.tensor(&port).data.into_iter().map(i64::from).collect())
                .collect()
        }
    };
    if images.is_empty() {
        bail!("infer: no images to run (--images 0 or an empty --input)");
    }
    Ok(Inputs {
        whole,
        whole_dir,
        images,
        labels,
    })
}

/// The link counters of `cus`, through the CUs' registers.
pub(crate) fn counters_of(device: &dyn Device, cus: &[String]) -> Vec<aurora::Counters> {
    cus.iter()
        .map(|c| {
            AuroraFlow::new(
                c.clone(),
                CuRegisters {
                    device,
                    cu: c.clone(),
                },
            )
            .counters()
            .unwrap_or_default()
        })
        .collect()
}

/// A cabled CU and the directed links it serves: (name, true = receives on it).
pub(crate) type LinkRoles = (String, Vec<(String, bool)>);

/// This rank's AuroraFlow CUs with a link, and the directed link names they receive or
/// send on (`fpga0:1->fpga1:0`), unused directions of a FINN cable left out.
pub(crate) fn link_roles(d: &DeviceDescription) -> Vec<LinkRoles> {
    let mut out = Vec::new();
    for l in &d.links {
        if d.kernel(&l.cu).is_none() {
            continue;
        }
        let mut roles = Vec::new();
        if !l.idle_rx {
            roles.push((
                format!("{}:{}->{}:{}", l.peer_device, l.peer_port, d.device, l.port),
                true,
            ));
        }
        if !l.idle_tx {
            roles.push((
                format!("{}:{}->{}:{}", d.device, l.port, l.peer_device, l.peer_port),
                false,
            ));
        }
        out.push((l.cu.clone(), roles));
    }
    out
}

/// The FINN CU `feeder` that streams into an output DMA (refused when it is not one).
pub(crate) fn output_feeder<'a>(d: &'a DeviceDescription, feeder: &str) -> Result<&'a KernelEntry> {
    d.kernel(feeder)
        .filter(|k| k.kind == "finn")
        .with_context(|| {
            format!(
                "device {}: an output DMA is fed by {feeder}, not by a FINN CU",
                d.device
            )
        })
}

/// The layout of the words the FINN CU `feeder` sends into the output DMA: what the
/// simulation opened it with, or (on a card) its partition in the executor export.
pub(crate) fn output_layout(
    d: &DeviceDescription,
    feeder: &str,
    factory: Option<&Arc<FinnExecFactory>>,
    reference: Option<&Path>,
) -> Result<WordLayout> {
    if let Some(o) = factory.and_then(|f| f.opened(feeder)) {
        return Ok(o.output);
    }
    let k = output_feeder(d, feeder)?;
    let reference = reference.context(
        "infer needs the partition plan's executor export (--reference) for the output's word layout",
    )?;
    let pipeline = Pipeline::load(reference)
        .with_context(|| format!("--reference {}", reference.display()))?;
    let stage = pipeline
        .stages
        .iter()
        .find(|s| s.device == d.device)
        .with_context(|| {
            format!(
                "--reference {}: no partition for device {}",
                reference.display(),
                d.device
            )
        })?;
    let (_, out) = stream_ports(k)?;
    let port = match stage.partition.outputs() {
        [p] => p.clone(),
        ps => bail!(
            "{feeder}: the partition has {} outputs; one is supported",
            ps.len()
        ),
    };
    WordLayout::new(feeder, out, port.dtype, stage.partition.frame_out_len())
}

/// What each rank tells the others before the run: [input DMAs, output DMAs, FINN CUs,
/// images (rank 0; -1 when its input or reference was refused)].
fn exchange(world: &SimpleCommunicator, mine: [i64; 4]) -> Vec<[i64; 4]> {
    let mut all = vec![0i64; 4 * world.size() as usize];
    world.all_gather_into(&mine[..], &mut all[..]);
    all.chunks(4).map(|c| [c[0], c[1], c[2], c[3]]).collect()
}

/// What every rank agreed on before the run: the number of images, the rank holding the
/// output DMA, and (rank 0) the images and the reference.
struct Agreed {
    n: usize,
    /// Input DMAs over every rank: more than one in a replica deployment.
    copies: usize,
    out_rank: i32,
    inputs: Option<Inputs>,
}

/// Every rank learns which ranks have the DMAs and FINN partitions and how many images
/// rank 0 prepared; a deployment `infer` cannot run is an outcome every rank reaches.
fn agree(
    world: &SimpleCommunicator,
    d: &DeviceDescription,
    args: &InferArgs,
) -> Result<std::result::Result<Agreed, Outcome>> {
    let me = world.rank();
    let finn_cus = d.kernels.iter().filter(|k| k.kind == "finn").count();
    let prepared = if me == 0 { Some(prepare(args)) } else { None };
    let n_images = match &prepared {
        Some(Ok(p)) => p.images.len() as i64,
        Some(Err(_)) => -1,
        None => 0,
    };
    let dmas = |kernel: &str| {
        d.kernels
            .iter()
            .filter(|k| k.kind == "hls" && k.kernel == kernel)
            .count() as i64
    };
    let all = exchange(
        world,
        [dmas("dma_in"), dmas("dma_out"), finn_cus as i64, n_images],
    );
    if all.iter().map(|r| r[2]).sum::<i64>() == 0 {
        return Ok(Err(Outcome::Failed(format!(
            "infer: deployment {} has no FINN partition on any device (CUs of {}: {}): it is a link deployment; use `bench latency` or `bench throughput`",
            d.deployment,
            d.device,
            d.kernels.iter().map(|k| k.cu.as_str()).collect::<Vec<_>>().join(", ")
        ))));
    }
    // A replica plan's deployment has an input DMA per copy (infer_replicas feeds them).
    let copies = all.iter().map(|r| r[0]).sum::<i64>() as usize;
    let n = all[0][3];
    if n < 0 {
        // Only rank 0 has the reason; the others just end with it.
        let why = match prepared {
            Some(Err(e)) => format!("{e:#}"),
            _ => "rank 0 refused the input or the reference".to_string(),
        };
        return Ok(Err(Outcome::Failed(why)));
    }
    if all[0][0] == 0 {
        return Ok(Err(Outcome::Failed(format!(
            "infer: rank 0 runs device {} without the input DMA (dma_in); the plan's first device must be the first in the deployment file",
            d.device
        ))));
    }
    let out_rank = all.iter().position(|r| r[1] >= 1).with_context(|| {
        format!(
            "infer: no device of deployment {} has the output DMA (dma_out)",
            d.deployment
        )
    })? as i32;
    Ok(Ok(Agreed {
        n: n as usize,
        copies,
        out_rank,
        inputs: prepared.map(|p| p.expect("checked above")),
    }))
}

/// The links must be up before any data goes out, as on the cards; their counters start
/// from zero.
pub(crate) fn links_up(
    device: &dyn Device,
    d: &DeviceDescription,
    link_cus: &[String],
) -> Result<()> {
    for cu in link_cus {
        let af = AuroraFlow::new(
            cu.clone(),
            CuRegisters {
                device,
                cu: cu.clone(),
            },
        );
        if !af.core_status_ok(Duration::from_secs(3))? {
            bail!(
                "device {}: link of {cu} is not up (CORE_STATUS {:#x}); check the cabling and `status`",
                d.device,
                af.core_status()?.raw
            );
        }
        af.reset_counters()?;
    }
    Ok(())
}

/// Receivers before senders: the free-running CUs take part first (the links, the FINN
/// partitions, and the tie-off sources of a cable's unused direction, whose empty stream
/// closes that direction; tie-off sinks get nothing).
pub(crate) fn begin_free_running(
    device: &mut dyn Device,
    d: &DeviceDescription,
    link_cus: &[String],
) -> Result<()> {
    for k in d.kernels.iter().filter(|k| k.control() == "ap_ctrl_none") {
        let aurora = link_cus.contains(&k.cu);
        let source = k.kind == "hls"
            && !k
                .ports
                .iter()
                .any(|p| p.kind == "m_axi" || (p.kind == "axis" && p.dir == "in"));
        if aurora || source || k.kind == "finn" {
            device.begin_free_running(&k.cu)?;
        }
    }
    Ok(())
}

/// Starts the output DMA (if this device has it), then the input DMA with the packed
/// images (rank 0): their runs and the output buffer.
fn start_dmas(
    device: &mut dyn Device,
    d: &DeviceDescription,
    agreed: &Agreed,
    factory: Option<&Arc<FinnExecFactory>>,
    args: &InferArgs,
) -> Result<(Vec<RunId>, Option<OutBuffer>)> {
    let mut runs: Vec<RunId> = Vec::new();
    let mut out_buffer = None;
    if let Some(cu) = hls_cu(d, "dma_out").map(|k| k.cu.clone()) {
        let feeder = stream_peer(d, &format!("{cu}.in"))
            .with_context(|| format!("device {}: nothing streams into {cu}.in", d.device))?;
        let layout = output_layout(d, &feeder, factory, args.reference.as_deref())?;
        let (run, out) = dma::drain(device, d, &cu, agreed.n, layout)?;
        runs.push(run);
        out_buffer = Some(out);
    }
    if let (Some(cu), Some(inp)) = (hls_cu(d, "dma_in").map(|k| k.cu.clone()), &agreed.inputs) {
        let target = stream_peer(d, &format!("{cu}.out"))
            .with_context(|| format!("device {}: {cu}.out streams nowhere", d.device))?;
        let k = d
            .kernel(&target)
            .with_context(|| format!("no CU {target}"))?;
        if k.kind != "finn" {
            bail!(
                "device {}: {cu}.out feeds {target}, not a FINN CU",
                d.device
            );
        }
        let (port, _) = stream_ports(k)?;
        let input = &inp.whole.inputs()[0];
        let layout = WordLayout::new(&target, port, input.dtype, inp.whole.frame_in_len())?;
        let packed: Vec<u8> = inp.images.iter().flat_map(|i| layout.pack(i)).collect();
        runs.push(dma::feed(device, d, &cu, &packed)?);
    }
    Ok((runs, out_buffer))
}

/// Waits for `runs`, sampling the links' counters every `period` (time since `t0`); every
/// stage has its own stall timeout, `budget` only bounds the whole run.
pub(crate) fn wait_sampling(
    device: &mut dyn Device,
    runs: Vec<RunId>,
    link_cus: &[String],
    t0: Instant,
    period: Duration,
    budget: Duration,
) -> Result<Vec<(f64, Vec<aurora::Counters>)>> {
    let mut samples = Vec::new();
    let mut next_sample = t0;
    loop {
        if Instant::now() >= next_sample {
            samples.push((t0.elapsed().as_secs_f64(), counters_of(&*device, link_cus)));
            next_sample += period;
        }
        device.check_free_running()?;
        let mut done = true;
        for r in &runs {
            done &= device.is_done(*r)?;
        }
        if done || t0.elapsed() > budget {
            break;
        }
        std::thread::sleep(Duration::from_millis(1).min(period));
    }
    wait_runs(device, &runs, t0, budget)?;
    Ok(samples)
}

/// The output values, unpacked from the output DMA's buffer, on rank 0 (sent there by the
/// rank that has it); None on the other ranks.
fn collect_outputs(
    world: &SimpleCommunicator,
    device: &mut dyn Device,
    out_rank: i32,
    out_buffer: &Option<OutBuffer>,
) -> Result<Option<Vec<i64>>> {
    let me = world.rank();
    let mut outputs = None;
    if let Some(out) = out_buffer {
        let values = dma::results(device, out)?;
        if me != 0 {
            world
                .process_at_rank(0)
                .send_with_tag(&values[..], TAG_OUTPUTS);
        } else {
            outputs = Some(values);
        }
    }
    if me == 0 && out_rank != 0 {
        let (v, _) = world
            .process_at_rank(out_rank)
            .receive_vec_with_tag::<i64>(TAG_OUTPUTS);
        outputs = Some(v);
    }
    Ok(outputs)
}

/// This rank's links over the run (samples and final counters), collected on rank 0.
pub(crate) fn gather_reports(
    world: &SimpleCommunicator,
    d: &DeviceDescription,
    links: &[LinkRoles],
    samples: &[(f64, Vec<aurora::Counters>)],
    finals: &[aurora::Counters],
) -> Result<Vec<RankReport>> {
    let report = RankReport {
        device: d.device.clone(),
        clock_mhz: d.clock_mhz,
        links: links
            .iter()
            .enumerate()
            .flat_map(|(i, (_, roles))| {
                roles.iter().map(move |(name, rx)| LinkSample {
                    name: name.clone(),
                    rx: *rx,
                    samples: samples.iter().map(|(t, c)| (*t, c[i].into())).collect(),
                    last: finals[i].into(),
                })
            })
            .collect(),
    };
    Ok(gather::to_root(world, serde_json::to_string(&report)?)
        .iter()
        .map(|t| serde_json::from_str(t))
        .collect::<Result<_, _>>()?)
}

/// Rank 0: every image through the unpartitioned reference, compared with what the
/// partitioned pipeline gave; writes the outputs, run.json and the report.
pub(crate) fn compare_with_reference(
    d: &DeviceDescription,
    args: &InferArgs,
    inputs: &Inputs,
    outputs: &[i64],
    reports: &[RankReport],
    wall: f64,
) -> Result<Outcome> {
    let n = inputs.images.len();
    let whole = &inputs.whole;
    let per = whole.frame_out_len();
    let labels = infer_report::label_output(&inputs.whole_dir)?;
    let progress = args
        .progress
        .then(|| progress::Counter::start("reference images (unpartitioned model)", n as u64));
    let mut frames = Vec::with_capacity(n);
    for (i, image) in inputs.images.iter().enumerate() {
        let want = whole
            .run_frame(image)
            .with_context(|| format!("reference, image {i}"))?;
        let got = &outputs[i * per..(i + 1) * per];
        frames.push(infer_report::frame(i, got, &want, labels));
        if let Some(p) = &progress {
            p.inc();
        }
    }
    if let Some(p) = progress {
        p.finish();
    }
    let mut run = Run::new(
        &d.deployment,
        n,
        reports,
        frames,
        wall,
        whole.outputs()[0].shape.clone(),
    );
    run.training = crate::weights::training_record(&inputs.whole_dir)?;
    if let (Some(labels), Some(path)) = (&inputs.labels, &args.labels) {
        run.set_labels(path, labels);
    }
    let report = match (&args.report, &args.reference) {
        (Some(r), Some(exec)) => Some((r, exec.as_path())),
        _ => None,
    };
    infer_report::finish(run, outputs, &args.out, report)
}

/// What an `infer` run takes besides the rank itself, handed on whole to the replicas' run.
#[derive(Clone, Copy)]
pub struct Call<'a> {
    pub world: &'a SimpleCommunicator,
    /// The functional executor's factory, for ranks that run the FINN CUs in software.
    pub factory: Option<&'a Arc<FinnExecFactory>>,
    pub args: &'a InferArgs,
    pub timeout: Duration,
}

pub fn run(call: Call<'_>, rank: &mut Rank) -> Result<Outcome> {
    let Call {
        world,
        factory,
        args,
        timeout,
    } = call;
    let d = rank.device.description()?.clone();
    let agreed = match agree(world, &d, args)? {
        Ok(a) => a,
        Err(outcome) => return Ok(outcome),
    };
    if agreed.copies > 1 {
        let batch = crate::infer_replicas::Batch {
            copies: agreed.copies,
            n: agreed.n,
            prepared: agreed.inputs,
        };
        return crate::infer_replicas::run(call, rank, batch);
    }
    let device: &mut dyn Device = &mut *rank.device;
    let links = link_roles(&d);
    let link_cus: Vec<String> = links.iter().map(|(c, _)| c.clone()).collect();
    links_up(&*device, &d, &link_cus)?;
    crate::idle::barrier(world);
    let t0 = Instant::now();
    let first_finn = d
        .kernels
        .iter()
        .find(|k| k.kind == "finn")
        .map(|k| k.cu.clone());
    let progress = match (rank.rank == 0 && args.progress, factory, first_finn) {
        (true, Some(f), Some(cu)) => Some(progress::Reporter::start(
            "images through the pipeline",
            agreed.n as u64,
            {
                let f = f.clone();
                move || {
                    f.opened(&cu)
                        .map_or(0, |o| o.frames.load(Ordering::Relaxed))
                }
            },
        )),
        _ => None,
    };
    begin_free_running(device, &d, &link_cus)?;
    // the output DMA before the input DMA: receivers before senders
    let (runs, out_buffer) = start_dmas(device, &d, &agreed, factory, args)?;
    let period = Duration::from_millis(args.sample_ms.max(1));
    let budget = timeout * (agreed.n as u32 + 10);
    let samples = wait_sampling(device, runs, &link_cus, t0, period, budget)?;
    device.end_free_running(timeout)?;
    let outputs = collect_outputs(world, device, agreed.out_rank, &out_buffer)?;
    let wall = t0.elapsed().as_secs_f64();
    if let Some(p) = progress {
        p.finish();
    }
    let finals = counters_of(&*device, &link_cus);
    let reports = gather_reports(world, &d, &links, &samples, &finals)?;
    let Some(inputs) = &agreed.inputs else {
        return Ok(Outcome::Done);
    };
    let outputs = outputs.context("rank 0 received no outputs")?;
    compare_with_reference(&d, args, inputs, &outputs, &reports, wall)
}
