//! `finn-partition`: partition a FINN dataflow graph across FPGAs.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Parser;
use finn_partitioner::{
    devices, estimates, partition, plan, slr, topology, Objective, Options, Replicas,
};

#[derive(Parser)]
#[command(about = "Partition a FINN dataflow graph across FPGAs with a MIP (CBC)")]
struct Cli {
    /// Estimates JSON from finn/flow/export_estimates.py.
    #[arg(long)]
    estimates: PathBuf,
    /// Devices JSON ({"devices": [{"name", "platform", "clk_mhz", ...}]}): a device's
    /// `platform` names a board file given with --platform, or is a path to one.
    #[arg(long)]
    devices: PathBuf,
    /// A board's platform file (toolchains/fpga_platforms/<platform>.toml), repeatable: the
    /// boards a device may name by platform name.
    #[arg(long = "platform")]
    platforms: Vec<PathBuf>,
    /// Topology JSON ({"kind": "chain" | "ring" | "switch" | "links", ...}).
    #[arg(long)]
    topology: PathBuf,
    #[arg(long, value_enum, default_value = "balanced")]
    objective: Objective,
    /// Plan JSON to write.
    #[arg(long)]
    out: PathBuf,
    /// Directory for one folding config per device (<device>.json).
    #[arg(long)]
    folding_dir: Option<PathBuf>,
    #[arg(long, default_value_t = 60.0)]
    time_limit: f64,
    /// Copies of the pipeline the cards hold: "auto" (as many as maximise the total FPS)
    /// or a count; 1 (the default) is the single-copy plan. Needs --objective throughput.
    #[arg(long)]
    replicas: Option<Replicas>,
    /// Also budget FF (FINN's analytic estimates have none, so off by default).
    #[arg(long)]
    with_ff: bool,
    /// Write the solver's wall-clock time here (`{"solver_seconds": ...}`); it is not
    /// part of the plan, which must be the same for the same inputs.
    #[arg(long)]
    timing_out: Option<PathBuf>,
}

fn write_atomic(path: &Path, text: &str) -> Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    }
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming to {}", path.display()))
}

fn run(cli: &Cli) -> Result<()> {
    let est = estimates::Estimates::load(&cli.estimates)?;
    let boards = devices::Boards::load(&cli.platforms)?;
    let devs = devices::load_with(&cli.devices, &boards)?;
    let topo = topology::load(&cli.topology)?;
    let mut opts = Options {
        objective: cli.objective,
        time_limit_s: cli.time_limit,
        replicas: cli.replicas,
        slrs: slr::load(&cli.devices)?,
        ..Options::default()
    };
    opts.considered[1] = cli.with_ff;
    let plan = partition(&est, &devs, &topo, &opts)
        .with_context(|| format!("partitioning {}", cli.estimates.display()))?;
    if let Some(dir) = &cli.folding_dir {
        for d in &plan.devices {
            let cfg = plan::folding_config(&plan, &d.name);
            write_atomic(
                &dir.join(format!("{}.json", d.name)),
                &serde_json::to_string_pretty(&cfg)?,
            )?;
        }
    }
    write_atomic(&cli.out, &serde_json::to_string_pretty(&plan)?)?;
    if let Some(path) = &cli.timing_out {
        let timing = serde_json::json!({ "solver_seconds": plan.solver.seconds });
        write_atomic(path, &serde_json::to_string_pretty(&timing)?)?;
    }
    if let (Some(total), Some(copies)) = (plan.fps_total, &plan.replicas) {
        eprintln!("{} replicas, {total:.1} FPS in total", copies.len());
    }
    for d in &plan.devices {
        if let Some(s) = &d.slrs {
            let runs: Vec<String> = s
                .runs
                .iter()
                .map(|r| format!("{} ({} layers)", r.slr, r.layers))
                .collect();
            eprintln!(
                "{}: {}, {} SLR crossing(s)",
                d.name,
                runs.join(" -> "),
                s.crossings
            );
        }
    }
    eprintln!(
        "{} devices, {:.1} FPS, {} cut(s), solved in {:.2} s ({})",
        plan.devices.len(),
        plan.fps,
        plan.cuts.len(),
        plan.solver.seconds,
        if plan.solver.optimal {
            "optimal".to_string()
        } else {
            format!("gap {:.2}%", plan.solver.gap * 100.0)
        }
    );
    println!("{}", cli.out.display());
    Ok(())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            // buck2's convention: 3 = user error
            ExitCode::from(3)
        }
    }
}
