//! The verbs: resolve the job from the cluster file and the user's choices, check it, write the
//! job directory and (for `submit`) hand the script to sbatch.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context, Result};

use crate::cli::{Cli, Job, Verb};
use crate::cluster;
use crate::jobdir;
use crate::script::{render, Spec};

/// `grpc://HOST:PORT` or `grpcs://HOST:PORT`, nothing a shell or sbatch could misread.
fn check_address(job: &Job, on_compute_nodes: bool) -> Result<()> {
    let a = &job.address;
    let rest = a
        .strip_prefix("grpc://")
        .or_else(|| a.strip_prefix("grpcs://"));
    let ok = rest
        .and_then(|r| r.rsplit_once(':'))
        .is_some_and(|(host, port)| {
            !host.is_empty()
                && host
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || ".-[]:".contains(c))
                && port.parse::<u16>().is_ok()
        });
    if !ok {
        bail!("--address `{a}`: expected grpc://HOST:PORT (or grpcs://HOST:PORT for TLS)");
    }
    let host = rest.and_then(|r| r.rsplit_once(':')).map(|(h, _)| h);
    if on_compute_nodes && matches!(host, Some("localhost" | "127.0.0.1" | "[::1]")) {
        bail!(
            "--address `{a}`: the workers run on compute nodes, where {} is the node itself; \
             give the BuildGrid host's name as the nodes reach it",
            host.unwrap_or_default()
        );
    }
    Ok(())
}

/// A value that goes into an `#SBATCH` line, which sbatch reads without a shell: one word of
/// the characters Slurm's names and times use.
fn check_directive(flag: &str, value: Option<&str>) -> Result<()> {
    let Some(v) = value else { return Ok(()) };
    if v.is_empty()
        || !v
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.:,-".contains(c))
    {
        bail!(
            "{flag} `{v}`: expected one word of letters, digits and `_.:,-` (a Slurm name or time)"
        );
    }
    Ok(())
}

fn write_script(cli: &Cli, job: &Job) -> Result<std::path::PathBuf> {
    if job.count == 0 {
        bail!("--count 0: a job needs at least one worker");
    }
    let c = cluster::resolve(
        job.cluster.as_deref().unwrap_or(&cli.default_cluster),
        &cli.cluster_files,
    )?;
    check_address(job, c.workers.on_compute_nodes)?;
    for (flag, value) in [
        ("--partition", &job.partition),
        ("--qos", &job.qos),
        ("--account", &job.account),
        ("--time", &job.time),
    ] {
        check_directive(flag, value.as_deref())?;
    }
    let (dir, worker) = jobdir::make(job.dir.as_deref(), &cli.worker)?;
    let req = &c.workers;
    let worker_flags = job.worker_flags();
    let text = render(&Spec {
        cluster: &c.name,
        count: job.count,
        address: &job.address,
        instance: &job.instance,
        properties: &cli.properties,
        partition: job.partition.as_deref().or(req.partition.as_deref()),
        qos: job.qos.as_deref().or(req.qos.as_deref()),
        account: job.account.as_deref(),
        time: job.time.as_deref().unwrap_or(&req.time),
        cpus_per_worker: job.cpus_per_worker.unwrap_or(req.cpus_per_worker),
        mem_per_cpu: req.mem_per_cpu.as_deref(),
        dir: &dir,
        worker: &worker,
        srun: &cli.srun,
        worker_flags: &worker_flags,
    });
    let script = dir.join("job.sh");
    std::fs::write(&script, text).with_context(|| format!("writing {}", script.display()))?;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))?;
    println!("job script: {}", script.display());
    Ok(script)
}

/// `sbatch --parsable` prints `ID` or `ID;CLUSTER`.
fn sbatch(sbatch: &str, script: &Path) -> Result<String> {
    let out = Command::new(sbatch)
        .arg("--parsable")
        .arg(script)
        .current_dir(script.parent().unwrap_or(Path::new(".")))
        .output()
        .with_context(|| {
            format!("running `{sbatch}` (Slurm's sbatch, from the slurm toolchain)")
        })?;
    if !out.status.success() {
        bail!(
            "sbatch refused {}: {}",
            script.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let id = text
        .trim()
        .split(';')
        .next()
        .unwrap_or_default()
        .to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        bail!(
            "sbatch printed no job id for {}: `{}`",
            script.display(),
            text.trim()
        );
    }
    Ok(id)
}

pub fn run(cli: &Cli) -> Result<()> {
    match &cli.verb {
        Verb::Script(job) => {
            let script = write_script(cli, job)?;
            eprintln!("re-workers: submit it with: sbatch {}", script.display());
        }
        Verb::Submit(job) => {
            let script = write_script(cli, job)?;
            let id = sbatch(&cli.sbatch, &script)?;
            println!("job id: {id}");
            eprintln!(
                "re-workers: job {id}: {} worker(s) for {}; logs in {}; stop them with: scancel {id}",
                job.count,
                job.address,
                script.parent().unwrap_or(Path::new(".")).display()
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(address: &str) -> Job {
        Job {
            count: 1,
            address: address.to_string(),
            instance: String::new(),
            cluster: None,
            partition: None,
            qos: None,
            account: None,
            time: None,
            cpus_per_worker: None,
            dir: None,
            read_only: Vec::new(),
            share_network: false,
            action_timeout: None,
        }
    }

    #[test]
    fn directive_values_are_one_word() {
        assert!(check_directive("--time", Some("4:00:00")).is_ok());
        assert!(check_directive("--partition", Some("normal")).is_ok());
        assert!(check_directive("--account", None).is_ok());
        for bad in ["a b", "x\n#SBATCH --mem=1T", "", "p;rm"] {
            assert!(
                check_directive("--partition", Some(bad)).is_err(),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn addresses() {
        assert!(check_address(&job("grpc://login1:50051"), true).is_ok());
        assert!(check_address(&job("grpcs://n2login.pc2.de:443"), true).is_ok());
        assert!(check_address(&job("grpc://127.0.0.1:50051"), false).is_ok());
        let e = check_address(&job("grpc://localhost:50051"), true).unwrap_err();
        assert!(format!("{e}").contains("compute nodes"), "{e}");
        for bad in [
            "login1:50051",
            "http://login1:50051",
            "grpc://login1",
            "grpc://a b:1",
        ] {
            assert!(check_address(&job(bad), false).is_err(), "{bad}");
        }
    }
}
