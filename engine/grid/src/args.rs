//! Command line of `forge-re-grid serve`.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use forge_re_grid::Options;

pub const USAGE: &str = "usage: forge-re-grid serve --dir DIR [--host ADDR] [--port P] \
[--keepalive-timeout SECONDS] [--postgres URL] [--bgd PATH] [--match-key KEY]... [--cache-only]

Runs BuildGrid (execution, bots, CAS, ByteStream, action cache on one port) in the
foreground, with its own PostgreSQL under DIR unless --postgres names one; writes the
server's address to DIR/address and prints it. SIGTERM or SIGINT stops everything.
--cache-only: a remote cache (CAS, ByteStream, action cache), no execution, no PostgreSQL.";

/// A worker silent for this long is dead and its lease requeued (BuildGrid's default is
/// 600 s, far longer than a user waits for a lost place & route run to restart).
pub const DEFAULT_KEEPALIVE: u32 = 60;

pub fn parse(mut it: impl Iterator<Item = String>) -> Result<Options> {
    match it.next().as_deref() {
        Some("serve") => {}
        Some(other) => bail!("unknown command `{other}` (expected `serve`)"),
        None => bail!("a command is required"),
    }
    let mut s = Options {
        dir: PathBuf::new(),
        host: "127.0.0.1".to_string(),
        port: None,
        keepalive_timeout: DEFAULT_KEEPALIVE,
        postgres: None,
        bgd: None,
        extra_match_keys: Vec::new(),
        cache_only: false,
        cancel: None,
    };
    let mut dir = None;
    while let Some(a) = it.next() {
        let mut value = || it.next().with_context(|| format!("{a} needs a value"));
        match a.as_str() {
            "--dir" => dir = Some(PathBuf::from(value()?)),
            "--host" => s.host = value()?,
            "--port" => {
                let v = value()?;
                s.port = Some(v.parse().with_context(|| format!("--port `{v}`"))?);
            }
            "--keepalive-timeout" => {
                let v = value()?;
                s.keepalive_timeout = v
                    .parse()
                    .with_context(|| format!("--keepalive-timeout `{v}`: whole seconds"))?;
            }
            "--postgres" => s.postgres = Some(value()?),
            "--bgd" => s.bgd = Some(value()?.into()),
            "--match-key" => s.extra_match_keys.push(value()?),
            "--cache-only" => s.cache_only = true,
            "-h" | "--help" => bail!("help requested"),
            other => bail!("unknown argument `{other}`"),
        }
    }
    let Some(dir) = dir else {
        bail!("--dir is required");
    };
    s.dir = std::path::absolute(&dir).with_context(|| format!("--dir {}", dir.display()))?;
    Ok(s)
}
