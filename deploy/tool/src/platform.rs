//! The platform description (toolchains/fpga_platforms/<name>.toml), read by its one reader
//! (rules/tools/fpga_platform); the deploy tool adds the check of the Slurm feature it writes
//! into job scripts.

use std::path::Path;

use anyhow::Result;

pub use fpga_platform::Platform;

/// The platform file, read and checked for what the deploy tool writes from it.
pub fn load(path: &Path) -> Result<Platform> {
    let p = Platform::load(path)?;
    let constraint = Some(&p.xrt_constraint).filter(|c| !c.is_empty());
    if let Some(why) = constraint.and_then(|c| crate::fields::slurm_constraint(c)) {
        anyhow::bail!("{}: xrt_constraint {:?} {why}", p.source, p.xrt_constraint);
    }
    Ok(p)
}
