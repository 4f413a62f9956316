//! `aurora-host`: the deployment's host driver. One MPI rank per device (as on the
//! cluster); each loads its xclbin, joins its Aurora links to the other ranks and runs the
//! command. `--backend sim` runs the simulated devices of the build graph, `--backend xrt`
//! the cards.

mod bench;
mod dma;
mod finn_cu;
mod infer;
mod infer_replicas;
mod infer_report;
mod labels;
mod ring;
mod ring_report;
mod status;
mod weights;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::Result;
// The rank setup and the MPI plumbing every host program shares (host/api).
use auroraforge_host::record::write_atomic;
use auroraforge_host::{gather, idle, launch, link_config, progress, rank_lines, setup, transport};
use clap::{Parser, Subcommand};
use mpi::topology::{Communicator, SimpleCommunicator};

#[derive(Parser)]
#[command(
    name = "aurora-host",
    about = "Host driver of an AuroraForge deployment (one MPI rank per FPGA)"
)]
struct Cli {
    /// One xclbin per rank, in rank order (rank r loads the r-th): PATH or DEVICE=PATH
    /// (then the xclbin must be that device's)
    #[arg(long = "xclbin", required = true)]
    xclbins: Vec<String>,
    /// The deployment's topology.json (deploy tool): rank r must run its device r
    #[arg(long)]
    topology: Option<PathBuf>,
    /// sim: simulated devices; xrt: cards through XRT; xrt-sim: the XRT backend over
    /// simulated cards behind XRT's calls (its logic, without a card)
    #[arg(long, default_value = "sim")]
    backend: String,
    /// Write every buffer and kernel call each rank makes on its device to
    /// DIR/rank<r>.calls (one line per call)
    #[arg(long, value_name = "DIR")]
    record_calls: Option<PathBuf>,
    /// xrt: the card of each rank by user BDF (default: index = rank % 3)
    #[arg(long = "bdf")]
    bdfs: Vec<String>,
    /// Longest any wait (link, stream, peer rank) may last without progress, seconds
    #[arg(long, default_value_t = 10.0)]
    timeout_s: f64,
    /// The mpirun that starts the ranks when aurora-host is run outside MPI
    #[arg(long, default_value = "mpirun")]
    mpirun: String,
    /// sim: channel delay of every link in Aurora user cycles (default: from cable_m)
    #[arg(long)]
    channel_cycles: Option<u64>,
    /// The partition plan's executor export (exec.json, <device>/, whole/): `infer`
    /// compares with its unpartitioned model `whole/`
    #[arg(long)]
    reference: Option<PathBuf>,
    /// The partition plan (plan.json): with --reference and --topology, `infer` writes the
    /// run report (pipelined model, simulated latency) beside run.json
    #[arg(long)]
    plan: Option<PathBuf>,
    /// The partitioner's devices.json: the report's utilisation budgets
    #[arg(long)]
    devices: Option<PathBuf>,
    /// Show progress of long runs even when stderr is not a terminal (plain lines)
    #[arg(long)]
    progress: bool,
    /// Set by the launcher for its ranks: print progress lines for it to draw
    #[arg(long, hide = true)]
    progress_lines: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Per device and link: link up, decoded registers, counters
    Status,
    /// COUNTER_RESET on every AuroraFlow CU
    ResetCounters,
    /// AuroraFlow's link benchmark; writes AuroraFlow-style CSV
    Bench {
        #[arg(value_enum)]
        mode: bench::Mode,
        #[arg(long, default_value_t = 64)]
        min_bytes: u64,
        #[arg(long, default_value_t = 1 << 20)]
        max_bytes: u64,
        /// Messages per size (default: latency 20, throughput 4 MiB worth, 1..1000)
        #[arg(long)]
        iterations: Option<u64>,
        #[arg(long, default_value_t = 1)]
        repetitions: u32,
        /// Receiver pause every 64 words, microseconds (makes flow control fire; simulated
        /// devices only)
        #[arg(long, default_value_t = 0)]
        throttle_us: u64,
        #[arg(long, default_value = "results.csv")]
        csv: PathBuf,
        /// On a ring: every hop's counters and modelled times per message size (JSON)
        #[arg(long, default_value = "hops.json")]
        hops: PathBuf,
        /// On a ring: its HTML page (the cards on their nodes, every cable's traffic, the
        /// ring's figures beside the paper's)
        #[arg(long, default_value = "ring.html")]
        ring_report: PathBuf,
    },
    /// N images through the FINN pipeline, compared with the unpartitioned model
    Infer {
        /// Images to run (default: all of --input, else 8)
        #[arg(long)]
        images: Option<u32>,
        /// Images as .npy, shaped like the model input ([N, ...]); default: seeded random
        /// images over the input datatype's range
        #[arg(long)]
        input: Option<PathBuf>,
        /// The true class of every --input image as .npy (integers, shape [N]): reports
        /// the top-1 / top-5 accuracy of the pipeline and of the unpartitioned model
        #[arg(long, requires = "input")]
        labels: Option<PathBuf>,
        /// Seed of the random images
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Where outputs.npy and run.json go
        #[arg(long, default_value = "infer-out")]
        out: PathBuf,
        /// Period of the link-counter samples in run.json, milliseconds
        #[arg(long, default_value_t = 50)]
        sample_ms: u64,
    },
}

fn main() {
    if !launch::under_mpi() {
        let cli = Cli::parse();
        let simulated = cli.backend != "xrt";
        match launch::launch(&cli.mpirun, cli.xclbins.len(), cli.progress, simulated) {
            Ok(code) => std::process::exit(code),
            Err(e) => {
                eprintln!("aurora-host: error: {e:#}");
                std::process::exit(1);
            }
        }
    }
    let Some((universe, _threading)) = mpi::initialize_with_threading(mpi::Threading::Multiple)
    else {
        eprintln!("aurora-host: error: MPI could not be initialised (start it with mpirun)");
        std::process::exit(1);
    };
    let world = universe.world();
    transport::abort_on_panic();
    if let Err(e) = run(&world) {
        if let Some(transport::Agreed(why)) = e.downcast_ref() {
            transport::fail_after_finalize(universe, why);
        }
        transport::fatal(&format!("{e:#}"));
    }
    rank_lines::done(world.rank());
}

fn run(world: &SimpleCommunicator) -> Result<()> {
    let cli = Cli::parse();
    let timeout = Duration::from_secs_f64(cli.timeout_s);
    let r = world.rank() as usize;
    let backend = setup::Backend::parse(&cli.backend, r, &cli.bdfs)?;
    let on_card = matches!(backend, setup::Backend::Xrt(_));
    let xclbins: Vec<setup::XclbinArg> = cli
        .xclbins
        .iter()
        .map(|x| setup::XclbinArg::parse(x))
        .collect();
    let finn = std::sync::Arc::new(finn_cu::FinnExecFactory::default());
    let mut rank = setup::open(
        world,
        backend,
        &xclbins,
        setup::Options {
            topology: cli.topology.as_deref(),
            timeout,
            channel_cycles: cli.channel_cycles,
            finn: (!on_card).then(|| finn.clone() as std::sync::Arc<_>),
            record: cli.record_calls.is_some(),
        },
    )?;
    let result = command(world, &cli, &mut rank, (!on_card).then_some(&finn), timeout);
    if let (Some(dir), Some(log)) = (&cli.record_calls, &rank.calls) {
        auroraforge_host::record::write(dir, rank.rank, log)?;
    }
    let agreed = result?;
    // After `infer` rank 0 runs every image through the unpartitioned reference while the
    // other ranks wait in `finish`: their wait grows with the images, as the run's own
    // budget does (without --images, as for the largest input file the soak runs).
    let within = match &cli.command {
        Command::Infer { images, .. } => timeout * (images.unwrap_or(1000) + 10),
        _ => timeout,
    };
    rank.finish(world, within);
    match agreed {
        Some(why) => Err(transport::Agreed(why).into()),
        None => Ok(()),
    }
}

/// Runs the command on this rank's device; `Some(why)`: a failure every rank agreed on,
/// for rank 0 to report once every rank got to the end.
fn command(
    world: &SimpleCommunicator,
    cli: &Cli,
    rank: &mut setup::Rank,
    finn: Option<&std::sync::Arc<finn_cu::FinnExecFactory>>,
    timeout: Duration,
) -> Result<Option<String>> {
    let d = rank.device.description()?.clone();
    match &cli.command {
        Command::Status => {
            let mut links: Vec<(String, String)> = rank
                .aurora
                .values()
                .filter_map(|c| {
                    bench::peer_of(&d, &c.name, c.port).map(|(pd, pp)| {
                        (
                            c.name.clone(),
                            format!("{}:{} <-> {pd}:{pp}", d.device, c.port),
                        )
                    })
                })
                .collect();
            if rank.aurora.is_empty() {
                // a card: the cables as the description lists them
                links = d
                    .links
                    .iter()
                    .map(|l| {
                        (
                            l.cu.clone(),
                            format!(
                                "{}:{} <-> {}:{}",
                                d.device, l.port, l.peer_device, l.peer_port
                            ),
                        )
                    })
                    .collect();
            }
            let text = status::report(
                &*rank.device,
                &d.device,
                rank.rank,
                &links,
                Duration::from_secs(3),
            )?;
            for t in gather::to_root(world, text) {
                print!("{t}");
            }
        }
        Command::ResetCounters => {
            let n = status::reset_counters(&*rank.device)?;
            for t in gather::to_root(
                world,
                format!("{}: counters reset on {n} AuroraFlow CUs\n", d.device),
            ) {
                print!("{t}");
            }
        }
        Command::Bench {
            mode,
            min_bytes,
            max_bytes,
            iterations,
            repetitions,
            throttle_us,
            csv,
            hops,
            ring_report,
        } => {
            let outcome = bench::run(
                world,
                rank,
                &bench::BenchArgs {
                    mode: *mode,
                    min_bytes: *min_bytes,
                    max_bytes: *max_bytes,
                    iterations: *iterations,
                    repetitions: *repetitions,
                    throttle_us: *throttle_us,
                    backend: cli.backend.clone(),
                },
                timeout,
            )?;
            let all = gather::to_root(world, outcome.rows.join("\n"));
            if rank.rank == 0 {
                let mut text = bench::CSV_COLUMNS.join(",") + "\n";
                for r in all.iter().filter(|r| !r.is_empty()) {
                    text.push_str(r);
                    text.push('\n');
                }
                write_atomic(csv, &text)?;
                println!(
                    "{} rows written to {}",
                    text.lines().count() - 1,
                    csv.display()
                );
                if !outcome.samples.is_empty() {
                    print!("{}", ring_report::text(&outcome.samples));
                    write_atomic(hops, &serde_json::to_string_pretty(&outcome.samples)?)?;
                    println!("every hop's counters written to {}", hops.display());
                    let deployment = &rank.device.description()?.deployment;
                    write_atomic(
                        ring_report,
                        &run_report::ring_page::render(deployment, &outcome.samples),
                    )?;
                    println!("the ring's page: {}", ring_report.display());
                }
                if let Some(why) = outcome.failure {
                    return Ok(Some(format!("bench on the ring: {why}")));
                }
            }
        }
        Command::Infer {
            images,
            input,
            labels,
            seed,
            out,
            sample_ms,
        } => {
            let args = infer::InferArgs {
                images: *images,
                input: input.clone(),
                labels: labels.clone(),
                seed: *seed,
                out: out.clone(),
                reference: cli.reference.clone(),
                report: infer::ReportInputs::given(
                    cli.plan.as_deref(),
                    cli.topology.as_deref(),
                    cli.devices.as_deref(),
                ),
                progress: cli.progress_lines,
                sample_ms: *sample_ms,
            };
            // A refused input or a disagreement ends every rank cleanly; rank 0 reports it.
            let outcome = infer::run(
                infer::Call {
                    world,
                    factory: finn,
                    args: &args,
                    timeout,
                },
                rank,
            )?;
            if let infer::Outcome::Failed(why) = outcome {
                if world.rank() == 0 {
                    return Ok(Some(why));
                }
            }
        }
    }
    Ok(None)
}
