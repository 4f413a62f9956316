//! `xclbin-pack`: packs a simulated device (description + payloads) into an axlf container.

use std::path::PathBuf;

use anyhow::{bail, Result};
use clap::Parser;

use xclbin::pack::{build, write_atomic, PackInput};

#[derive(Parser)]
#[command(
    name = "xclbin-pack",
    about = "Pack a simulated device into an xclbin (axlf) container"
)]
struct Cli {
    /// The device description JSON (format auroraforge-sim-device/1)
    #[arg(long)]
    description: PathBuf,
    /// NAME=PATH: one EMULATION_DATA section named NAME (a directory becomes an AFARCH1 archive)
    #[arg(long = "payload", value_name = "NAME=PATH")]
    payloads: Vec<String>,
    /// Platform name written to the header (must equal the description's platform)
    #[arg(long)]
    platform: String,
    /// The platform's file (toolchains/fpga_platforms/<platform>.toml): board id, part, banks
    #[arg(long)]
    platform_desc: PathBuf,
    /// The xclbin to write
    #[arg(long)]
    out: PathBuf,
}

fn main() {
    if let Err(e) = run() {
        eprintln!("xclbin-pack: error: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let cli = Cli::parse();
    let mut payloads = Vec::new();
    for p in &cli.payloads {
        let Some((name, path)) = p.split_once('=') else {
            bail!("--payload '{p}': expected NAME=PATH");
        };
        payloads.push((name.to_string(), PathBuf::from(path)));
    }
    let xclbin = build(&PackInput {
        description_path: cli.description,
        payloads,
        platform: cli.platform,
        platform_desc: cli.platform_desc,
    })?;
    write_atomic(&cli.out, &xclbin.to_bytes()?)
}
