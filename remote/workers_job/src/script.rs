//! The one template of the job script, for any cluster file: a header a cluster user can read
//! (what the job starts, for which BuildGrid, how it ends, where the logs go), the Slurm
//! directives of the cluster, then one bot per Slurm task through srun.

use std::fmt::Write as _;
use std::path::Path;

/// Everything the script says, resolved (the cluster's defaults with the user's overrides).
pub struct Spec<'a> {
    /// The cluster's name.
    pub cluster: &'a str,
    pub count: u32,
    pub address: &'a str,
    pub instance: &'a str,
    pub properties: &'a [(String, String)],
    pub partition: Option<&'a str>,
    pub qos: Option<&'a str>,
    pub account: Option<&'a str>,
    pub time: &'a str,
    pub cpus_per_worker: u32,
    pub mem_per_cpu: Option<&'a str>,
    /// The job directory: the worker's copy, the job's and each worker's log.
    pub dir: &'a Path,
    pub worker: &'a Path,
    pub srun: &'a str,
    /// More forge-re-worker flags (`--read-only DIR`, `--share-network`, `--action-timeout`).
    pub worker_flags: &'a [String],
}

/// A word for bash: as it is when it cannot be misread, else single-quoted.
pub fn shell_word(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+=:,@%".contains(c);
    match s.chars().all(plain) && !s.is_empty() {
        true => s.to_string(),
        false => ["'", &s.replace('\'', r"'\''"), "'"].concat(),
    }
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

pub fn render(spec: &Spec) -> String {
    let dir = spec.dir.display().to_string();
    let props: Vec<String> = spec
        .properties
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    let mut s = String::from("#!/usr/bin/env bash\n");
    let _ = writeln!(
        s,
        "# Remote execution workers: {n} forge-re-worker bot(s) for the BuildGrid at\n\
         # {addr} (cluster {cluster}), written by `./forge run //remote:workers`.\n\
         #\n\
         # Each Slurm task runs one bot. A bot takes one action at a time from BuildGrid, runs\n\
         # it in its sandbox on inputs from BuildGrid's CAS and uploads the outputs. It offers\n\
         # these platform properties; BuildGrid gives it only actions that ask for the same:\n\
         #   {props}\n\
         # The bots stop when the job ends: at its time limit (-t below) or `scancel <job id>`.\n\
         # BuildGrid hands an action whose bot went away to another bot.\n\
         #\n\
         # This script's directory holds the job: the bot (forge-re-worker, copied when the\n\
         # script was written, so a rebuild does not change a queued job), job-<job id>.out\n\
         # (this script's output) and worker-<job id>-<task>.log (each bot's). Submit it\n\
         # again as it is with sbatch.",
        n = spec.count,
        addr = spec.address,
        cluster = spec.cluster,
        props = if props.is_empty() {
            "(none)".to_string()
        } else {
            props.join(" ")
        },
    );
    let _ = writeln!(s, "#SBATCH -J forge-workers");
    let _ = writeln!(s, "#SBATCH -n {}", spec.count);
    let _ = writeln!(s, "#SBATCH --cpus-per-task={}", spec.cpus_per_worker);
    if let Some(m) = spec.mem_per_cpu {
        let _ = writeln!(s, "#SBATCH --mem-per-cpu={m}");
    }
    let _ = writeln!(s, "#SBATCH -t {}", spec.time);
    for (flag, value) in [
        ("-p", spec.partition),
        ("-q", spec.qos),
        ("-A", spec.account),
    ] {
        if let Some(v) = value {
            let _ = writeln!(s, "#SBATCH {flag} {v}");
        }
    }
    // sbatch reads directives itself (no shell): the directory is checked to have no spaces
    let _ = writeln!(s, "#SBATCH -o {dir}/job-%j.out");
    s.push_str("set -euo pipefail\n\n");
    let _ = writeln!(s, "dir={}", shell_word(&dir));
    let _ = write!(
        s,
        "# one --property per platform property the bot offers\n\
         worker=(\"$dir\"/{} --address {}",
        shell_word(&file_name(spec.worker)),
        shell_word(spec.address)
    );
    if !spec.instance.is_empty() {
        let _ = write!(s, " --instance {}", shell_word(spec.instance));
    }
    for p in &props {
        let _ = write!(s, " \\\n    --property {}", shell_word(p));
    }
    let words: Vec<String> = spec.worker_flags.iter().map(|w| shell_word(w)).collect();
    if !words.is_empty() {
        let _ = write!(s, " \\\n    {}", words.join(" "));
    }
    s.push_str(")\n");
    let _ = writeln!(
        s,
        "echo \"job ${{SLURM_JOB_ID}}: ${{SLURM_NTASKS}} worker(s) on ${{SLURM_JOB_NODELIST}} for {}\"",
        spec.address
    );
    s.push_str(
        "# one bot per task, each with its own log; srun returns when every bot has stopped,\n",
    );
    s.push_str("# and a bot that fails does not stop the others\n");
    let _ = writeln!(
        s,
        "exec {} --kill-on-bad-exit=0 --output=\"$dir\"/worker-%j-%t.log \"${{worker[@]}}\"",
        shell_word(spec.srun),
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use std::process::Command;

    /// The project's cluster file (tests run from remote/workers_job).
    fn cluster(name: &str) -> cluster_file::Workers {
        let file = PathBuf::from(format!("../../toolchains/clusters/{name}.toml"));
        cluster_file::Cluster::read(&file).unwrap().workers
    }

    fn spec<'a>(
        cluster: &'a str,
        req: &'a cluster_file::Workers,
        props: &'a [(String, String)],
        dir: &'a Path,
        worker: &'a Path,
    ) -> Spec<'a> {
        Spec {
            cluster,
            count: 3,
            address: "grpc://login1:50051",
            instance: "",
            properties: props,
            partition: req.partition.as_deref(),
            qos: req.qos.as_deref(),
            account: None,
            time: &req.time,
            cpus_per_worker: req.cpus_per_worker,
            mem_per_cpu: req.mem_per_cpu.as_deref(),
            dir,
            worker,
            srun: "srun",
            worker_flags: &[],
        }
    }

    fn directives(script: &str) -> Vec<&str> {
        script
            .lines()
            .filter_map(|l| l.strip_prefix("#SBATCH "))
            .collect()
    }

    /// bash itself reads each word back (the reference is the shell, not this code).
    #[test]
    fn shell_words_read_back_by_bash() {
        for w in [
            "plain/path-1.2",
            "with space",
            "it's",
            "$HOME `x`",
            "a\"b",
            "",
        ] {
            let out = Command::new("bash")
                .arg("-c")
                .arg(format!("printf %s {}", shell_word(w)))
                .output()
                .expect("bash");
            assert_eq!(String::from_utf8_lossy(&out.stdout), w);
        }
    }

    #[test]
    fn noctua2_asks_for_the_synthesis_qos_and_local_for_nothing_site_specific() {
        let props = vec![("OSFamily".to_string(), "linux".to_string())];
        let dir = PathBuf::from("/scratch/job dir");
        let worker = dir.join("forge-re-worker");
        let (n2_req, local_req) = (cluster("noctua2"), cluster("local"));
        // PC2 Noctua 2 documentation, "Additional Information for FPGA Projects": synthesis
        // in partition normal under QoS fpgasynthesis, 32 to 64 CPUs, 64 GB, 4 to 12 hours
        let n2 = render(&spec("noctua2", &n2_req, &props, &dir, &worker));
        let d = directives(&n2);
        for want in [
            "-n 3",
            "-p normal",
            "-q fpgasynthesis",
            "--cpus-per-task=32",
            "--mem-per-cpu=2G",
            "-t 4:00:00",
        ] {
            assert!(d.contains(&want), "{want} missing from {d:?}");
        }
        let local = render(&spec("local", &local_req, &props, &dir, &worker));
        let d = directives(&local);
        assert!(
            d.iter()
                .all(|l| !l.starts_with("-p ") && !l.starts_with("-q ")),
            "{d:?}"
        );
        assert!(d.iter().all(|l| !l.starts_with("--mem")), "{d:?}");
        for script in [&n2, &local] {
            let ok = Command::new("bash")
                .args(["-n", "-c", script])
                .status()
                .unwrap();
            assert!(ok.success(), "bash -n rejects:\n{script}");
            assert!(script.contains("--property OSFamily=linux"), "{script}");
        }
    }

    /// The flags that open the host to actions reach every bot's command line as the words
    /// bash reads back (the stand-in srun prints what it was given).
    #[test]
    fn worker_flags_reach_every_bot() {
        let dir = std::env::temp_dir().join(format!("re-workers-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        // removed also when the test fails
        struct Removed<'a>(&'a std::path::Path);
        impl Drop for Removed<'_> {
            fn drop(&mut self) {
                let _ = std::fs::remove_dir_all(self.0);
            }
        }
        let _removed = Removed(&dir);
        let srun = dir.join("srun");
        std::fs::write(&srun, "#!/bin/sh\nshift 2\nprintf '<%s>' \"$@\"\n").unwrap();
        std::fs::set_permissions(&srun, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
        let worker = dir.join("forge-re-worker");
        let local_req = cluster("local");
        let flags: Vec<String> = ["--read-only", "/opt/xilinx tools", "--share-network"]
            .map(str::to_string)
            .to_vec();
        let srun_path = srun.to_string_lossy().into_owned();
        let script = render(&Spec {
            worker_flags: &flags,
            srun: &srun_path,
            ..spec("local", &local_req, &[], &dir, &worker)
        });
        let out = Command::new("bash")
            .args(["-c", &script])
            .env("SLURM_JOB_ID", "1")
            .env("SLURM_NTASKS", "1")
            .env("SLURM_JOB_NODELIST", "n1")
            .output()
            .unwrap();
        let printed = String::from_utf8_lossy(&out.stdout);
        assert!(
            printed.contains("<--read-only></opt/xilinx tools><--share-network>"),
            "{printed}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
