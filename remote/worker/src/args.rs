//! Command line: where BuildGrid is, which instance, and the platform properties this
//! worker offers (the keys BuildGrid's `match-property-keys` compares with actions').

use anyhow::{bail, Context, Result};

pub const USAGE: &str = "usage: forge-re-worker --address grpc://HOST:PORT [--instance NAME] \
[--property KEY=VALUE]... [--name BOT_ID] [--work-dir DIR] [--action-timeout SECONDS] \
[--read-only DIR]... [--share-network]";

#[derive(Clone, Debug)]
pub struct Args {
    /// `grpc://host:port`: BuildGrid's Bots service, CAS and ByteStream.
    pub address: String,
    pub instance: String,
    pub properties: Vec<(String, String)>,
    pub bot_id: String,
    /// Where execution roots are made (a fresh directory per lease, removed after; a dead
    /// worker's by the next worker started here: `exec_root`).
    pub work_dir: Option<std::path::PathBuf>,
    /// An action running longer is killed (also when its own `Action.timeout` is longer).
    pub action_timeout: Option<std::time::Duration>,
    /// `--read-only DIR` (tool installations shown to actions) and `--share-network`.
    pub host: forge_exec::HostAccess,
}

impl Args {
    pub fn parse(mut it: impl Iterator<Item = String>) -> Result<Args> {
        let mut address = None;
        let mut instance = String::new();
        let mut properties = Vec::new();
        let mut bot_id = None;
        let mut work_dir = None;
        let mut action_timeout = None;
        let mut host = forge_exec::HostAccess::default();
        while let Some(a) = it.next() {
            let mut value = || it.next().with_context(|| format!("{a} needs a value"));
            match a.as_str() {
                "--address" => address = Some(value()?),
                "--instance" => instance = value()?,
                "--name" => bot_id = Some(value()?),
                "--work-dir" => work_dir = Some(value()?.into()),
                "--read-only" => {
                    let dir = std::path::PathBuf::from(value()?);
                    if !dir.is_absolute() || !dir.exists() {
                        bail!(
                            "--read-only `{}`: expected an existing absolute path",
                            dir.display()
                        );
                    }
                    host.read_only.push(dir);
                }
                "--share-network" => host.network = true,
                "--action-timeout" => {
                    let v = value()?;
                    let secs: f64 = v
                        .parse()
                        .ok()
                        .filter(|s: &f64| *s > 0.0 && s.is_finite())
                        .with_context(|| {
                            format!("--action-timeout `{v}`: expected seconds, more than 0")
                        })?;
                    action_timeout = Some(std::time::Duration::from_secs_f64(secs));
                }
                "--property" => {
                    let v = value()?;
                    let Some((k, val)) = v.split_once('=') else {
                        bail!("--property `{v}`: expected KEY=VALUE");
                    };
                    properties.push((k.to_string(), val.to_string()));
                }
                "-h" | "--help" => bail!("help requested"),
                other => bail!("unknown argument `{other}`"),
            }
        }
        let Some(address) = address else {
            bail!("--address is required");
        };
        let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname")
            .map(|h| h.trim().to_string())
            .unwrap_or_else(|_| "localhost".to_string());
        Ok(Args {
            address,
            instance,
            properties,
            bot_id: bot_id.unwrap_or_else(|| format!("{hostname}-{}", std::process::id())),
            work_dir,
            action_timeout,
            host,
        })
    }
}
