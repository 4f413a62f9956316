//! The one reader of a cluster file, `toolchains/clusters/<name>.toml`: what a Slurm site asks
//! of the jobs the project writes for it (the deployment's job script: partition, cards per
//! node, modules, the FPGA link-switching command and its syntax; the remote workers' job:
//! partition, QoS, CPUs, memory, time). deploy-tool and re-workers both read it through
//! `Cluster::read`; a user adds their site as one more file. Every key: `keys::KEYS`
//! (toolchains/clusters/README.md is generated from it).
//!
//! Errors name the file, the line and the key, and say what to write instead.

pub mod keys;
pub mod template;

use std::path::Path;

use anyhow::{bail, Result};
use serde::Deserialize;
use toml::Spanned;

pub use template::Template;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCluster {
    name: Spanned<String>,
    #[serde(default)]
    description: Option<String>,
    job: RawJob,
    links: Option<RawLinks>,
    workers: RawWorkers,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawJob {
    partition: Option<Spanned<String>>,
    cards_per_node: Option<Spanned<u32>>,
    #[serde(default)]
    platform_constraint: bool,
    modules: Option<Vec<Spanned<String>>>,
    backend: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawLinks {
    command: Spanned<String>,
    endpoint: Spanned<String>,
    argument: Spanned<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWorkers {
    partition: Option<Spanned<String>>,
    qos: Option<Spanned<String>>,
    cpus_per_worker: Spanned<u32>,
    mem_per_cpu: Option<Spanned<String>>,
    time: Spanned<String>,
    #[serde(default)]
    on_compute_nodes: bool,
}

/// A cluster, checked: every string is what sbatch, Lmod and bash read as one word.
#[derive(Clone, Debug)]
pub struct Cluster {
    /// The file as it was given (what errors name).
    pub file: String,
    pub name: String,
    pub description: Option<String>,
    pub job: Job,
    pub links: Option<Links>,
    pub workers: Workers,
}

/// The deployment's job script on this cluster.
#[derive(Clone, Debug)]
pub struct Job {
    /// `#SBATCH -p`; None: the cluster's default partition.
    pub partition: Option<String>,
    /// FPGA cards per node and the line of the key; None: the nodes have no cards (the
    /// simulated ranks are processes), nothing to check a description against.
    pub cards_per_node: Option<(u32, usize)>,
    /// `#SBATCH --constraint=` the platform's XRT feature (or the description's constraint).
    pub platform_constraint: bool,
    /// Lmod modules loaded after `module reset` (a description's `[slurm] modules` replaces
    /// them); None: no module system.
    pub modules: Option<Vec<String>>,
    /// The host driver's `--backend` on this cluster's nodes; None: the simulated devices.
    pub backend: Option<String>,
}

/// How the job cables its links before the ranks start.
#[derive(Clone, Debug)]
pub struct Links {
    pub command: String,
    /// One cable end: fields `{node}`, `{card}`, `{port}`.
    pub endpoint: Template,
    /// One cable's argument: fields `{a}`, `{b}` (the two ends).
    pub argument: Template,
}

impl Links {
    /// The name of one cable end.
    pub fn end(&self, node: u32, card: u32, port: u32) -> String {
        self.endpoint.render(&|f| {
            match f {
                "node" => node,
                "card" => card,
                _ => port,
            }
            .to_string()
        })
    }

    /// The command's argument for the cable between two ends (as `end` names them).
    pub fn cable(&self, a: &str, b: &str) -> String {
        self.argument.render(&|f| {
            if f == "a" {
                a.to_string()
            } else {
                b.to_string()
            }
        })
    }
}

/// What one remote-execution worker (one Slurm task) asks for, before the user's overrides.
#[derive(Clone, Debug)]
pub struct Workers {
    pub partition: Option<String>,
    pub qos: Option<String>,
    pub cpus_per_worker: u32,
    pub mem_per_cpu: Option<String>,
    pub time: String,
    /// The workers run on compute nodes, not where BuildGrid runs: `localhost` is refused.
    pub on_compute_nodes: bool,
}

/// Where a byte offset of the text is, as an editor counts lines.
fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// One word of the characters Slurm's names use (`#SBATCH` lines are read without a shell).
fn slurm_word(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

fn slurm_time(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || ":-".contains(c))
}

/// `2G`, `500M`, `1024`: Slurm's memory sizes.
fn slurm_mem(s: &str) -> bool {
    let digits = s.trim_end_matches(['K', 'M', 'G', 'T']);
    !digits.is_empty() && digits.len() + 1 >= s.len() && digits.chars().all(|c| c.is_ascii_digit())
}

/// An Lmod module name (`xilinx/xrt/2.16`, `gompi/2025b`), written into the job unquoted.
fn module_word(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-+".contains(c))
}

fn command_word(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('-')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c))
}

struct Reader<'a> {
    file: &'a str,
    text: &'a str,
}

impl Reader<'_> {
    fn err(&self, offset: usize, key: &str, msg: &str) -> anyhow::Error {
        anyhow::anyhow!("{}:{}: {key}: {msg}", self.file, line_of(self.text, offset))
    }

    /// The value when `ok`, else an error naming the key and what it must be.
    fn word(
        &self,
        v: &Spanned<String>,
        key: &str,
        ok: fn(&str) -> bool,
        what: &str,
    ) -> Result<String> {
        if ok(v.get_ref()) {
            Ok(v.get_ref().clone())
        } else {
            Err(self.err(
                v.span().start,
                key,
                &format!("{:?} is not {what}", v.get_ref()),
            ))
        }
    }

    fn opt(
        &self,
        v: &Option<Spanned<String>>,
        key: &str,
        ok: fn(&str) -> bool,
        what: &str,
    ) -> Result<Option<String>> {
        v.as_ref().map(|v| self.word(v, key, ok, what)).transpose()
    }

    fn template(&self, v: &Spanned<String>, key: &str, fields: &[&str]) -> Result<Template> {
        Template::parse(v.get_ref(), fields).map_err(|m| self.err(v.span().start, key, &m))
    }
}

const SLURM_NAME: &str = "a Slurm name (one word of letters, digits and `_.-`)";

impl Cluster {
    /// Reads and checks a cluster file; its name must be the file's stem, so a site is named
    /// the same in the file, the build's sub-targets and on the command line.
    pub fn read(path: &Path) -> Result<Cluster> {
        let file = path.display().to_string();
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("{file}: cannot read the cluster file: {e}"))?;
        Cluster::parse(&file, &text)
    }

    /// `read` of a text that came from `file` (the name errors give).
    pub fn parse(file: &str, text: &str) -> Result<Cluster> {
        let raw: RawCluster = toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(1);
            anyhow::anyhow!(
                "{file}:{line}: {} (every key of a cluster file: toolchains/clusters/README.md)",
                e.message().trim_end()
            )
        })?;
        let r = Reader { file, text };
        let name = r.word(
            &raw.name,
            "name",
            |s| {
                !s.is_empty()
                    && s.chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "_-".contains(c))
            },
            "a cluster name (lower-case letters, digits, `_` and `-`)",
        )?;
        let stem = Path::new(file)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned());
        if stem.as_deref() != Some(name.as_str()) {
            return Err(r.err(
                raw.name.span().start,
                "name",
                &format!(
                    "{name:?} is not the file's name ({}); name the file {name}.toml or write \
                     name = {:?}",
                    stem.unwrap_or_default(),
                    Path::new(file)
                        .file_stem()
                        .unwrap_or_default()
                        .to_string_lossy()
                ),
            ));
        }
        let job = Self::job(&r, &raw.job)?;
        let links = raw
            .links
            .as_ref()
            .map(|l| -> Result<Links> {
                Ok(Links {
                    command: r.word(
                        &l.command,
                        "links.command",
                        command_word,
                        "a command name (letters, digits, `/._-`)",
                    )?,
                    endpoint: r.template(
                        &l.endpoint,
                        "links.endpoint",
                        &["node", "card", "port"],
                    )?,
                    argument: r.template(&l.argument, "links.argument", &["a", "b"])?,
                })
            })
            .transpose()?;
        let w = &raw.workers;
        if *w.cpus_per_worker.get_ref() == 0 {
            return Err(r.err(
                w.cpus_per_worker.span().start,
                "workers.cpus_per_worker",
                "must be at least 1",
            ));
        }
        let workers = Workers {
            partition: r.opt(&w.partition, "workers.partition", slurm_word, SLURM_NAME)?,
            qos: r.opt(&w.qos, "workers.qos", slurm_word, SLURM_NAME)?,
            cpus_per_worker: *w.cpus_per_worker.get_ref(),
            mem_per_cpu: r.opt(
                &w.mem_per_cpu,
                "workers.mem_per_cpu",
                slurm_mem,
                "a Slurm memory size (`2G`, `500M`)",
            )?,
            time: r.word(
                &w.time,
                "workers.time",
                slurm_time,
                "a Slurm time (`4:00:00`, `1-00:00:00`)",
            )?,
            on_compute_nodes: w.on_compute_nodes,
        };
        Ok(Cluster {
            file: file.to_string(),
            name,
            description: raw.description,
            job,
            links,
            workers,
        })
    }

    fn job(r: &Reader, j: &RawJob) -> Result<Job> {
        let cards_per_node = match &j.cards_per_node {
            Some(c) if *c.get_ref() == 0 => {
                bail!(r.err(c.span().start, "job.cards_per_node", "must be at least 1"))
            }
            Some(c) => Some((*c.get_ref(), line_of(r.text, c.span().start))),
            None => None,
        };
        let modules = j
            .modules
            .as_ref()
            .map(|ms| {
                ms.iter()
                    .map(|m| {
                        r.word(
                            m,
                            "job.modules",
                            module_word,
                            "a module name (letters, digits, `/._-+`)",
                        )
                    })
                    .collect::<Result<Vec<_>>>()
            })
            .transpose()?;
        Ok(Job {
            partition: r.opt(&j.partition, "job.partition", slurm_word, SLURM_NAME)?,
            cards_per_node,
            platform_constraint: j.platform_constraint,
            modules,
            backend: r.opt(
                &j.backend,
                "job.backend",
                slurm_word,
                "a backend name of the host driver",
            )?,
        })
    }
}
