//! re-workers: the Slurm job that starts N forge-re-worker bots (one per Slurm task) for a
//! BuildGrid, rendered for a cluster file (Noctua 2's synthesis QoS, a local test cluster, a site's own),
//! written into a job directory the user can read, and submitted with sbatch.
//!
//!   re-workers --worker BIN --sbatch sbatch --srun srun --property K=V... \
//!       submit|script --count N --address grpc://HOST:PORT [--cluster NAME|FILE] [...]

mod cli;
mod cluster;
mod jobdir;
mod script;
mod submit;

use clap::Parser;

fn main() {
    let cli = cli::Cli::parse();
    if let Err(e) = submit::run(&cli) {
        eprintln!("re-workers: {e:#}");
        std::process::exit(1);
    }
}
