//! `action`: every helper the rules run inside an action or a test, one subcommand each
//! (they replaced the shell scripts of rules/tools/). One binary, so the bootstrap rule
//! (`cargo_bootstrap_binary` in rules/cargo.bzl) builds one crate before any `cargo_binary`
//! can run, and every toolchain names the same file.
//!
//! Exit status: 0 on success, 2 on a usage error (clap's), 3 when the wrapped tool or the
//! helper itself failed, 1 when tests or simulations failed (as the scripts did).

mod bench;
mod build_model;
mod cargo;
mod copy_tree;
mod probe_version;
mod run_sim;
mod run_tests;
mod stamp;
mod util;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "action",
    about = "The helpers the project's rules run inside their actions"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Runs cargo inside a build action: `build` copies one binary out of the shared target
    /// dir, `test-build` collects the crate's test executables.
    Cargo(cargo::Args),
    /// Runs every test executable `cargo test-build` collected, from the crate's directory.
    RunTests(run_tests::Args),
    /// Runs each `--`-separated command and records its command line and output.
    ProbeVersion(probe_version::Args),
    /// Runs Verilator into a declared directory, optionally on the shared runtime.
    BuildModel(build_model::Args),
    /// Runs a simulation once per `--`-separated plusarg set, two at a time.
    RunSim(run_sim::Args),
    /// Runs a command; on success writes its combined output to OUT.
    Stamp(stamp::Args),
    /// Copies a directory outside the graph (a bootstrap's tree) into a declared output.
    CopyTree(copy_tree::Args),
    /// The AuroraFlow link throughput/latency bench: runs the two models, prints the table,
    /// fails when the streaming goal is not met.
    Bench(bench::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Each subcommand prints its own messages and returns the exit status; it returns rather
    // than exiting so its temporary files are removed by their guards first.
    let result = match cli.command {
        Command::Cargo(a) => cargo::run(a),
        Command::RunTests(a) => run_tests::run(a),
        Command::ProbeVersion(a) => probe_version::run(a),
        Command::BuildModel(a) => build_model::run(a),
        Command::RunSim(a) => run_sim::run(a),
        Command::Stamp(a) => stamp::run(a),
        Command::CopyTree(a) => copy_tree::run(a),
        Command::Bench(a) => bench::run(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(util::Exit(code)) => ExitCode::from(code),
    }
}
