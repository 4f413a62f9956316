//! `vpp-link`: the `vitis` link of one FPGA. v++ links every `.xo` it is given (a kernel
//! without an `nk=` line still gets one CU), so only the kernels the device's validated
//! description uses may reach it; which ones is known only once `link-config` has run,
//! hence this step instead of a v++ command line written at analysis time.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::Value;

pub struct VppLinkArgs<'a> {
    pub vpp: &'a Path,
    pub platform: &'a str,
    pub config: &'a Path,
    pub sim_description: &'a Path,
    pub xos: &'a [PathBuf],
    pub out: &'a Path,
}

/// The kernels (as built: their `.xo` file stems) the device's description instantiates:
/// each CU's `payload`, which differs from its v++ `kernel` name for a width variant
/// (`dma_out_w16.xo` holds kernel `dma_out`).
fn used_kernels(sim_description: &Path) -> Result<BTreeSet<String>> {
    let text = std::fs::read_to_string(sim_description)
        .with_context(|| format!("reading {}", sim_description.display()))?;
    let v: Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a device description", sim_description.display()))?;
    let kernels = v["kernels"]
        .as_array()
        .with_context(|| format!("{}: no `kernels` list", sim_description.display()))?;
    Ok(kernels
        .iter()
        .filter_map(|k| {
            k["payload"]
                .as_str()
                .or_else(|| k["kernel"].as_str())
                .map(str::to_owned)
        })
        .collect())
}

/// `xos` and every `*.xo` file in `dirs` (sorted by name, so v++ sees them in the same
/// order on every machine): a replica plan's FINN kernels are one directory, since which
/// ones a device carries is known only once the plan exists.
pub fn with_dirs(mut xos: Vec<PathBuf>, dirs: &[PathBuf]) -> Result<Vec<PathBuf>> {
    for dir in dirs {
        let mut found = Vec::new();
        for e in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
            let p = e
                .with_context(|| format!("reading {}", dir.display()))?
                .path();
            if p.extension().is_some_and(|x| x == "xo") {
                found.push(p);
            }
        }
        found.sort();
        xos.extend(found);
    }
    Ok(xos)
}

/// The `.xo` of each used kernel: the file named `<kernel>.xo`.
pub fn select_xos(used: &BTreeSet<String>, xos: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut chosen = Vec::new();
    for kernel in used {
        let want = format!("{kernel}.xo");
        match xos
            .iter()
            .find(|x| x.file_name().is_some_and(|n| n.to_string_lossy() == want))
        {
            Some(x) => chosen.push(x.clone()),
            None => bail!(
                "the device uses kernel `{kernel}` but no {want} was given (the link's `kernels` \
                 must include its target)"
            ),
        }
    }
    Ok(chosen)
}

pub fn vpp_link(a: &VppLinkArgs) -> Result<()> {
    let used = used_kernels(a.sim_description)?;
    let xos = select_xos(&used, a.xos)?;
    let out_dir = a.out.parent().unwrap_or(Path::new("."));
    let tmp = out_dir.join(format!(".vpp-link.{}.xclbin", std::process::id()));
    // v++ writes _x/ and logs into its working directory: a scratch dir, not the project.
    let work = tempfile::tempdir().context("creating v++'s scratch directory")?;
    let status = Command::new(a.vpp)
        .args(["-l", "-t", "hw", "--platform", a.platform, "--config"])
        .arg(std::path::absolute(a.config)?)
        .arg("-o")
        .arg(std::path::absolute(&tmp)?)
        .args(
            xos.iter()
                .map(std::path::absolute)
                .collect::<std::io::Result<Vec<_>>>()?,
        )
        .current_dir(work.path())
        .status()
        .with_context(|| format!("running {}", a.vpp.display()))?;
    if !status.success() {
        let _ = std::fs::remove_file(&tmp);
        bail!(
            "{} -l exited with {status} (logs in v++'s _x/ are not kept)",
            a.vpp.display()
        );
    }
    std::fs::rename(&tmp, a.out).with_context(|| format!("renaming to {}", a.out.display()))
}
