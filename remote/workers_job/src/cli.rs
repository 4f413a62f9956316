//! The command line: what the rule fixes (the worker binary, Slurm's commands, the platform's
//! properties) before the verb, what the user chooses after it.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(name = "re-workers", about = "Remote execution workers as a Slurm job")]
pub struct Cli {
    /// The forge-re-worker binary; the job runs a copy of it, taken when the job is written.
    #[arg(long)]
    pub worker: PathBuf,
    /// Slurm's sbatch (from the slurm toolchain).
    #[arg(long, default_value = "sbatch")]
    pub sbatch: String,
    /// Slurm's srun as the job script calls it on the allocated node.
    #[arg(long, default_value = "srun")]
    pub srun: String,
    /// A cluster file `--cluster NAME` may name (by its stem): the rule passes every
    /// toolchains/clusters/<name>.toml.
    #[arg(long = "cluster-file")]
    pub cluster_files: Vec<PathBuf>,
    /// The cluster when the user names none (the rule's: `[deploy] cluster`).
    #[arg(long, default_value = "noctua2")]
    pub default_cluster: String,
    /// A platform property KEY=VALUE every worker offers (the execution platform's).
    #[arg(long = "property", value_parser = parse_property)]
    pub properties: Vec<(String, String)>,
    #[command(subcommand)]
    pub verb: Verb,
}

#[derive(Subcommand, Debug)]
pub enum Verb {
    /// Write the job script and submit it: prints the script's path and the job id.
    Submit(Job),
    /// Only write the job script (to read, or to `sbatch` by hand): prints its path.
    Script(Job),
}

#[derive(Args, Debug, Clone)]
pub struct Job {
    /// How many workers (Slurm tasks), each running one action at a time.
    #[arg(long)]
    pub count: u32,
    /// BuildGrid's address, grpc://HOST:PORT (or grpcs:// for TLS), as the nodes reach it.
    #[arg(long)]
    pub address: String,
    /// REAPI instance name, if BuildGrid serves a named one.
    #[arg(long, default_value = "")]
    pub instance: String,
    /// The cluster: a name (noctua2: the synthesis QoS of PC2's Noctua 2; local: the test
    /// cluster; any toolchains/clusters/<name>.toml) or a cluster file's path.
    #[arg(long)]
    pub cluster: Option<String>,
    /// Slurm partition (default: the cluster's).
    #[arg(long)]
    pub partition: Option<String>,
    /// Slurm QoS (default: the cluster's).
    #[arg(long)]
    pub qos: Option<String>,
    /// Slurm account (-A) to charge.
    #[arg(long)]
    pub account: Option<String>,
    /// The job's time limit, Slurm's format (default: the cluster's); the workers stop then.
    #[arg(long)]
    pub time: Option<String>,
    /// CPUs per worker (default: the cluster's).
    #[arg(long)]
    pub cpus_per_worker: Option<u32>,
    /// Where the job directory is made (default: buck-out/remote-workers of the project
    /// around the current directory).
    #[arg(long)]
    pub dir: Option<PathBuf>,
    /// A tool installation (absolute path on the nodes) every action is shown, read-only
    /// (forge-re-worker --read-only): e.g. the Vitis tree of `fpga-tools=vitis` workers.
    #[arg(long = "read-only")]
    pub read_only: Vec<PathBuf>,
    /// Actions reach the node's network (forge-re-worker --share-network): a licence server.
    #[arg(long)]
    pub share_network: bool,
    /// An action running longer than this many seconds is killed (forge-re-worker
    /// --action-timeout).
    #[arg(long)]
    pub action_timeout: Option<u64>,
}

impl Job {
    /// The forge-re-worker flags that open the host to actions or bound them.
    pub fn worker_flags(&self) -> Vec<String> {
        let mut flags = Vec::new();
        for dir in &self.read_only {
            flags.extend(["--read-only".to_string(), dir.display().to_string()]);
        }
        if self.share_network {
            flags.push("--share-network".to_string());
        }
        if let Some(s) = self.action_timeout {
            flags.extend(["--action-timeout".to_string(), s.to_string()]);
        }
        flags
    }
}

fn parse_property(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_string(), v.to_string())),
        _ => Err(format!("`{s}`: expected KEY=VALUE")),
    }
}
