//! `deploy-tool`: see the crate README for the deployment format and every subcommand.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use deploy_tool::commands::{self, LinkConfigArgs, ScriptArgs};

#[derive(Parser)]
#[command(
    name = "deploy-tool",
    about = "Deployment description -> partitioner inputs, v++ link configs, job scripts, report"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Parse and validate the deployment against the platform and the target's devices.
    Check {
        #[arg(long)]
        deployment: PathBuf,
        #[arg(long)]
        platform: PathBuf,
        /// The BUCK target's device names, in order (comma separated).
        #[arg(long, value_delimiter = ',')]
        devices: Vec<String>,
        /// The `fpga_deployment` target's name, which the description's `name` must be.
        #[arg(long)]
        name: Option<String>,
        /// The partition plan: its devices must be these, each cut must have a cable.
        #[arg(long)]
        plan: Option<PathBuf>,
        /// Written (with the summary) only when the deployment is valid: the output that
        /// makes the check a build action every reader of the description depends on.
        #[arg(long)]
        stamp: Option<PathBuf>,
    },
    /// The partitioner's devices and topology JSON from the deployment.
    PartitionerInputs {
        #[arg(long)]
        deployment: PathBuf,
        #[arg(long)]
        platform: PathBuf,
        #[arg(long)]
        devices_out: PathBuf,
        #[arg(long)]
        topology_out: PathBuf,
    },
    /// What one device's link step needs from the partition plan (its own layers, its cuts,
    /// the pipeline ends): unchanged when only other devices' layers change.
    PlanSlice {
        #[arg(long)]
        plan: PathBuf,
        #[arg(long)]
        device: String,
        #[arg(long)]
        out: PathBuf,
    },
    /// One FPGA's validated v++ --config and its simulated device description.
    LinkConfig {
        #[arg(long)]
        deployment: PathBuf,
        #[arg(long)]
        platform: PathBuf,
        #[arg(long)]
        device: String,
        /// kernel.json files; CUs take their kernel by its `name`.
        #[arg(long = "kernel", num_args = 1..)]
        kernels: Vec<PathBuf>,
        #[arg(long)]
        plan: Option<PathBuf>,
        /// hw/aurora_flow/kernel.toml, for the [flow_control] in-flight budget per cable.
        #[arg(long)]
        flow_control: Option<PathBuf>,
        /// The FINN partition's model (path recorded in the sim description).
        #[arg(long)]
        finn_model: Option<String>,
        #[arg(long)]
        cfg_out: PathBuf,
        #[arg(long)]
        sim_out: PathBuf,
    },
    /// The Slurm job script, the run script and the topology JSON.
    Scripts {
        #[arg(long)]
        deployment: PathBuf,
        /// The platform TOML (Slurm constraint); default: toolchains/fpga_platforms/<platform>.toml.
        #[arg(long)]
        platform: Option<PathBuf>,
        /// The cluster file the job script is for (toolchains/clusters/<name>.toml).
        #[arg(long)]
        cluster: PathBuf,
        /// DEVICE=PATH, one per device.
        #[arg(long = "xclbin", num_args = 1..)]
        xclbins: Vec<String>,
        #[arg(long)]
        host: String,
        /// The partition plan, for the cuts in the topology.
        #[arg(long)]
        plan: Option<PathBuf>,
        /// The plan's executor export (exec.json, whole/): passed to the host as
        /// `--reference`, the unpartitioned model `infer` compares against.
        #[arg(long)]
        finn_exec: Option<String>,
        /// The partitioner's devices.json (budgets): passed to the host as `--devices`,
        /// for the utilisation bars of `infer`'s run report.
        #[arg(long)]
        devices_json: Option<String>,
        /// Each device's sim description (app hls: the banks the link step assigned, for
        /// topology.json's `cus`).
        #[arg(long = "sim", num_args = 1..)]
        sims: Vec<PathBuf>,
        #[arg(long)]
        job_out: PathBuf,
        #[arg(long)]
        run_out: PathBuf,
        #[arg(long)]
        topology_out: PathBuf,
    },
    /// The deployment bundle: a directory that runs wherever it is copied, with SHA256SUMS.
    Bundle {
        #[arg(long)]
        deployment: PathBuf,
        #[arg(long)]
        platform: PathBuf,
        /// The cluster file the job script is for (toolchains/clusters/<name>.toml).
        #[arg(long)]
        cluster: PathBuf,
        /// DEVICE=PATH, one per device.
        #[arg(long = "xclbin", num_args = 1..)]
        xclbins: Vec<String>,
        #[arg(long)]
        host: PathBuf,
        #[arg(long)]
        topology: PathBuf,
        #[arg(long)]
        report: PathBuf,
        #[arg(long)]
        plan: Option<PathBuf>,
        #[arg(long)]
        finn_exec: Option<PathBuf>,
        #[arg(long)]
        devices_json: Option<PathBuf>,
        /// The bundle directory (replaced as a whole).
        #[arg(long)]
        out: PathBuf,
    },
    /// The `vitis` link of one FPGA: v++ -l with the .xo files of the kernels it uses.
    VppLink {
        /// The FPGA toolchain's v++.
        #[arg(long)]
        vpp: PathBuf,
        #[arg(long)]
        platform: String,
        #[arg(long)]
        config: PathBuf,
        #[arg(long)]
        sim_description: PathBuf,
        #[arg(long = "xo", num_args = 1..)]
        xos: Vec<PathBuf>,
        /// A directory of `<kernel>.xo` files (a replica plan's FINN kernels), each a
        /// candidate as if given with --xo.
        #[arg(long = "xo-dir")]
        xo_dirs: Vec<PathBuf>,
        #[arg(long)]
        out: PathBuf,
    },
    /// A self-contained HTML report with an SVG of the deployment.
    Report {
        #[arg(long)]
        deployment: PathBuf,
        #[arg(long)]
        platform: PathBuf,
        #[arg(long)]
        plan: Option<PathBuf>,
        #[arg(long = "sim", num_args = 1..)]
        sims: Vec<PathBuf>,
        #[arg(long)]
        out: PathBuf,
    },
    /// The description's key reference in markdown (deploy/tool/README.md holds it); with
    /// --write FILE, the part of FILE between its describe-format markers is replaced.
    DescribeFormat {
        #[arg(long)]
        write: Option<PathBuf>,
    },
    /// The cluster file's key reference in markdown (toolchains/clusters/README.md holds it);
    /// with --write FILE, the part of FILE between its cluster-keys markers is replaced.
    DescribeCluster {
        #[arg(long)]
        write: Option<PathBuf>,
    },
}

/// The platform file of a deployment that names its platform only (scripts needs few facts).
fn default_platform(deployment: &std::path::Path) -> anyhow::Result<PathBuf> {
    #[derive(serde::Deserialize)]
    struct Head {
        platform: String,
    }
    // Source::read names the file (and the line of a byte that is not UTF-8).
    let text = deploy_tool::diag::Source::read(deployment)?.text;
    let head: Head = toml::from_str::<toml::Value>(&text)
        .ok()
        .and_then(|v| v.try_into().ok())
        .ok_or_else(|| anyhow::anyhow!("{}: no platform key", deployment.display()))?;
    Ok(PathBuf::from(format!(
        "toolchains/fpga_platforms/{}.toml",
        head.platform
    )))
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.cmd {
        Cmd::Check {
            deployment,
            platform,
            devices,
            name,
            plan,
            stamp,
        } => commands::check(
            &deployment,
            &platform,
            &commands::Target {
                name: name.as_deref(),
                devices: &devices,
            },
            plan.as_deref(),
            stamp.as_deref(),
        ),
        Cmd::PartitionerInputs {
            deployment,
            platform,
            devices_out,
            topology_out,
        } => commands::partitioner_inputs(&deployment, &platform, &devices_out, &topology_out),
        Cmd::PlanSlice { plan, device, out } => commands::plan_slice(&plan, &device, &out),
        Cmd::LinkConfig {
            deployment,
            platform,
            device,
            kernels,
            plan,
            flow_control,
            finn_model,
            cfg_out,
            sim_out,
        } => commands::link_config(&LinkConfigArgs {
            deployment: &deployment,
            platform: &platform,
            device: &device,
            kernels: &kernels,
            plan: plan.as_deref(),
            flow_control: flow_control.as_deref(),
            finn_model: finn_model.as_deref(),
            cfg_out: &cfg_out,
            sim_out: &sim_out,
        }),
        Cmd::Scripts {
            deployment,
            platform,
            cluster,
            xclbins,
            host,
            plan,
            finn_exec,
            devices_json,
            sims,
            job_out,
            run_out,
            topology_out,
        } => {
            let platform = match platform {
                Some(p) => p,
                None => default_platform(&deployment)?,
            };
            commands::scripts(&ScriptArgs {
                deployment: &deployment,
                platform: &platform,
                cluster: &cluster,
                xclbins: &xclbins,
                host: &host,
                plan: plan.as_deref(),
                finn_exec: finn_exec.as_deref(),
                devices_json: devices_json.as_deref(),
                sims: &sims,
                job_out: &job_out,
                run_out: &run_out,
                topology_out: &topology_out,
            })
        }
        Cmd::Bundle {
            deployment,
            platform,
            cluster,
            xclbins,
            host,
            topology,
            report,
            plan,
            finn_exec,
            devices_json,
            out,
        } => deploy_tool::bundle::bundle(&deploy_tool::bundle::BundleArgs {
            deployment: &deployment,
            platform: &platform,
            cluster: &cluster,
            xclbins: &xclbins,
            host: &host,
            topology: &topology,
            report: &report,
            plan: plan.as_deref(),
            finn_exec: finn_exec.as_deref(),
            devices_json: devices_json.as_deref(),
            out: &out,
        }),
        Cmd::VppLink {
            vpp,
            platform,
            config,
            sim_description,
            xos,
            xo_dirs,
            out,
        } => deploy_tool::vpp_link::vpp_link(&deploy_tool::vpp_link::VppLinkArgs {
            vpp: &vpp,
            platform: &platform,
            config: &config,
            sim_description: &sim_description,
            xos: &deploy_tool::vpp_link::with_dirs(xos, &xo_dirs)?,
            out: &out,
        }),
        Cmd::Report {
            deployment,
            platform,
            plan,
            sims,
            out,
        } => commands::report(&deployment, &platform, plan.as_deref(), &sims, &out),
        Cmd::DescribeFormat { write: None } => {
            println!("{}", deploy_tool::format::markdown());
            Ok(())
        }
        Cmd::DescribeFormat { write: Some(file) } => splice_into(
            &file,
            deploy_tool::format::splice,
            (deploy_tool::format::BEGIN, deploy_tool::format::END),
        ),
        Cmd::DescribeCluster { write: None } => {
            println!("{}", cluster_file::keys::markdown());
            Ok(())
        }
        Cmd::DescribeCluster { write: Some(file) } => splice_into(
            &file,
            cluster_file::keys::splice,
            (cluster_file::keys::BEGIN, cluster_file::keys::END),
        ),
    }
}

/// FILE with the part between its markers replaced by `splice`, written atomically.
fn splice_into(
    file: &std::path::Path,
    splice: fn(&str) -> Option<String>,
    (begin, end): (&str, &str),
) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| anyhow::anyhow!("{}: cannot read: {e}", file.display()))?;
    let new = splice(&text).ok_or_else(|| {
        anyhow::anyhow!(
            "{}: no markers; add the lines\n{begin}\n{end}\nwhere the reference goes",
            file.display()
        )
    })?;
    deploy_tool::diag::write_atomic(file, &new)
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}
