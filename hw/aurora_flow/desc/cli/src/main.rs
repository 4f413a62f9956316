//! `aurora-flow-desc`: the files generated from hw/aurora_flow/kernel.toml, each written
//! atomically (temporary file, then rename).

use anyhow::{bail, Result};
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(about = "The AuroraFlow kernel description and the files generated from it")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Rewrites every generated file and README table under ROOT that differs from KERNEL_TOML.
    Regenerate { kernel_toml: PathBuf, root: PathBuf },
    /// Fails, naming them, when generated files under ROOT differ from KERNEL_TOML.
    Check { kernel_toml: PathBuf, root: PathBuf },
    /// Checks one instance's parameters (params.json of aurora_flow_kernel) and writes its
    /// top, XDC, kernel.xml and params.tcl into OUT_DIR.
    Package {
        /// params.tcl names absolute paths (Vivado runs in a scratch directory)
        #[arg(long)]
        absolute: bool,
        /// The board's platform file (toolchains/fpga_platforms/<platform>.toml): the
        /// instance must be one of its QSFP ports. Without it no board is checked (the
        /// renders of tcl/check_render.sh).
        #[arg(long)]
        platform: Option<PathBuf>,
        kernel_toml: PathBuf,
        params_json: PathBuf,
        out_dir: PathBuf,
    },
}

fn main() -> Result<()> {
    match Cli::parse().command {
        Command::Regenerate { kernel_toml, root } => {
            let desc = aurora_flow_desc::load(&kernel_toml)?;
            for path in aurora_flow_desc::generated::regenerate(&root, &desc)? {
                println!("wrote {path}");
            }
        }
        Command::Check { kernel_toml, root } => {
            let desc = aurora_flow_desc::load(&kernel_toml)?;
            let stale = aurora_flow_desc::generated::stale(&root, &desc)?;
            if !stale.is_empty() {
                bail!(
                    "stale, not what {} gives: {}; run `aurora-flow-desc regenerate {} {}`",
                    kernel_toml.display(),
                    stale.join(", "),
                    kernel_toml.display(),
                    root.display()
                );
            }
        }
        Command::Package {
            absolute,
            platform,
            kernel_toml,
            params_json,
            out_dir,
        } => {
            let desc = aurora_flow_desc::load(&kernel_toml)?;
            let board = platform
                .map(|p| fpga_platform::Platform::load(&p))
                .transpose()?;
            aurora_flow_desc::package::write_package(
                &desc,
                &params_json,
                board.as_ref(),
                &out_dir,
                absolute,
            )?;
        }
    }
    Ok(())
}
