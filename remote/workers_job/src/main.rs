//! re-workers: the Slurm job that starts N forge-re-worker bots (one per Slurm task) for a
//! BuildGrid, rendered for a profile (Noctua 2's synthesis QoS, or a local test cluster),
//! written into a job directory the user can read, and submitted with sbatch.
//!
//!   re-workers --worker BIN --sbatch sbatch --srun srun --property K=V... \
//!       submit|script --count N --address grpc://HOST:PORT [--profile P] [...]

mod cli;
mod jobdir;
mod profile;
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
