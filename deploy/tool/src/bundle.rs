//! The deployment bundle: one directory with everything a run on the cluster needs (both
//! bitstreams, the host driver, the job and run scripts, the description, topology, report,
//! for a FINN network the reference, plan and budgets) and a `SHA256SUMS` of every file, in
//! the format `sha256sum -c` reads. Its scripts name every file relative to the bundle, so it
//! runs wherever it is copied (`sbatch <name>/job.sh`, `<name>/run.sh infer`).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

use crate::commands::{load, load_cluster, parse_xclbins};
use crate::scripts::{self, Launch, Root};

pub struct BundleArgs<'a> {
    pub deployment: &'a Path,
    pub platform: &'a Path,
    /// The cluster file the bundle's job script is for.
    pub cluster: &'a Path,
    /// DEVICE=PATH, one per device.
    pub xclbins: &'a [String],
    pub host: &'a Path,
    pub topology: &'a Path,
    pub report: &'a Path,
    pub plan: Option<&'a Path>,
    pub finn_exec: Option<&'a Path>,
    pub devices_json: Option<&'a Path>,
    pub out: &'a Path,
}

/// Names inside the bundle.
const JOB: &str = "job.sh";
const RUN: &str = "run.sh";
const TOPOLOGY: &str = "topology.json";
const REPORT: &str = "report.html";
const REFERENCE: &str = "finn/exec";
const PLAN: &str = "finn/plan.json";
const DEVICES: &str = "finn/devices.json";
pub const SUMS: &str = "SHA256SUMS";

fn file_name(p: &Path) -> Result<String> {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .with_context(|| format!("{}: no file name", p.display()))
}

/// Copies a file or a directory tree (following symlinks: the bundle holds the bytes).
fn copy_in(from: &Path, to: &Path) -> Result<()> {
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent).with_context(|| format!("creating {}", parent.display()))?;
    }
    if from.is_dir() {
        fs::create_dir_all(to)?;
        let mut entries: Vec<_> = fs::read_dir(from)
            .with_context(|| format!("reading {}", from.display()))?
            .collect::<std::io::Result<_>>()?;
        entries.sort_by_key(|e| e.file_name());
        for e in entries {
            copy_in(&e.path(), &to.join(e.file_name()))?;
        }
        return Ok(());
    }
    fs::copy(from, to).with_context(|| format!("copying {} into the bundle", from.display()))?;
    // the bundle's files are the user's: writable, whatever the build's outputs were
    let mode = fs::metadata(from)?.permissions().mode();
    let exec = mode & 0o111 != 0;
    fs::set_permissions(
        to,
        fs::Permissions::from_mode(if exec { 0o755 } else { 0o644 }),
    )?;
    Ok(())
}

fn write_file(to: &Path, text: &str, mode: u32) -> Result<()> {
    if let Some(parent) = to.parent() {
        fs::create_dir_all(parent)?;
    }
    fs::write(to, text).with_context(|| format!("writing {}", to.display()))?;
    fs::set_permissions(to, fs::Permissions::from_mode(mode))?;
    Ok(())
}

/// Every file under `dir`, relative, in byte order of the path.
fn files_under(dir: &Path) -> Result<Vec<String>> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) -> Result<()> {
        for e in fs::read_dir(dir)? {
            let e = e?;
            let p = e.path();
            if e.file_type()?.is_dir() {
                walk(base, &p, out)?;
            } else {
                out.push(p.strip_prefix(base)?.to_string_lossy().into_owned());
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out)?;
    out.sort();
    Ok(out)
}

/// `sha256sum` lines (`<hex>  <path>`) of every file in `dir`.
pub fn sha256sums(dir: &Path) -> Result<String> {
    let mut s = String::new();
    for rel in files_under(dir)? {
        if rel.contains('\n') || rel.contains('\\') {
            bail!(
                "{rel}: a bundle file name with a newline or backslash cannot be listed in {SUMS}"
            );
        }
        let bytes = fs::read(dir.join(&rel))?;
        s.push_str(&format!("{:x}  {rel}\n", Sha256::digest(&bytes)));
    }
    Ok(s)
}

fn fill(a: &BundleArgs, dir: &Path) -> Result<()> {
    let (d, p) = load(a.deployment, a.platform)?;
    let cluster = load_cluster(a.cluster, &d)?;
    let xclbins = parse_xclbins(&d, a.xclbins)?;
    let host = file_name(a.host)?;
    copy_in(a.host, &dir.join(&host))?;
    let mut inside = Vec::new();
    for (dev, path) in &xclbins {
        let name = format!("{dev}.xclbin");
        copy_in(Path::new(path), &dir.join(&name))?;
        inside.push((dev.clone(), name));
    }
    copy_in(a.topology, &dir.join(TOPOLOGY))?;
    copy_in(a.report, &dir.join(REPORT))?;
    copy_in(a.deployment, &dir.join(file_name(a.deployment)?))?;
    let finn = [
        (a.finn_exec, REFERENCE),
        (a.plan, PLAN),
        (a.devices_json, DEVICES),
    ];
    for (from, to) in finn {
        if let Some(from) = from {
            copy_in(from, &dir.join(to))?;
        }
    }
    let launch = Launch {
        root: Root::Bundle,
        host: &host,
        xclbins: &inside,
        topology: TOPOLOGY,
        job: JOB,
        reference: a.finn_exec.map(|_| REFERENCE),
        plan: a.plan.map(|_| PLAN),
        devices: a.devices_json.map(|_| DEVICES),
    };
    write_file(
        &dir.join(JOB),
        &scripts::job_script(&d, &p, &launch, &cluster),
        0o755,
    )?;
    write_file(&dir.join(RUN), &scripts::run_script(&d, &p, &launch), 0o755)?;
    let sums = sha256sums(dir)?;
    write_file(&dir.join(SUMS), &sums, 0o644)
}

/// Builds the bundle in a temporary sibling of `out` and renames it into place: a failure
/// leaves nothing behind.
pub fn bundle(a: &BundleArgs) -> Result<()> {
    let parent = match a.out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    fs::create_dir_all(&parent).with_context(|| format!("creating {}", parent.display()))?;
    let tmp = tempfile::Builder::new()
        .prefix(".bundle.")
        .tempdir_in(&parent)
        .with_context(|| format!("creating a temporary directory in {}", parent.display()))?;
    fill(a, tmp.path())?;
    // tempfile makes it private; the bundle is meant to be shared
    fs::set_permissions(tmp.path(), fs::Permissions::from_mode(0o755))?;
    if a.out.exists() {
        fs::remove_dir_all(a.out).with_context(|| format!("removing {}", a.out.display()))?;
    }
    let dir = tmp.keep();
    fs::rename(&dir, a.out).with_context(|| {
        let _ = fs::remove_dir_all(&dir);
        format!("renaming the bundle to {}", a.out.display())
    })
}
