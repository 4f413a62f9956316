//! aurora-report: the HTML page of an `aurora-host infer` run.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use run_report::{write_report, ReportPaths};

/// Render run.json with the deployment's plan, executor graphs and topology as one HTML page.
#[derive(Parser)]
#[command(name = "aurora-report")]
struct Cli {
    /// run.json written by `aurora-host infer`
    #[arg(long)]
    run: PathBuf,
    /// the deployment's partition plan (plan.json)
    #[arg(long)]
    plan: PathBuf,
    /// the partition's executor export (the directory holding exec.json)
    #[arg(long)]
    exec: PathBuf,
    /// the deployment's topology.json
    #[arg(long)]
    topology: PathBuf,
    /// the partitioner's devices.json, for the utilisation budgets
    #[arg(long)]
    devices: Option<PathBuf>,
    #[arg(long, default_value = "report.html")]
    out: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let paths = ReportPaths {
        run: &cli.run,
        plan: &cli.plan,
        exec: &cli.exec,
        topology: &cli.topology,
        devices: cli.devices.as_deref(),
        out: &cli.out,
    };
    match write_report(&paths) {
        Ok(fig) => {
            print!("{}", fig.summary());
            println!("report: {}", cli.out.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
