//! The deployment's options on a host program's command line. The run script and job script
//! the deploy tool writes start every host as
//! `<host> --topology topology.json [--backend xrt] --xclbin fpga0=X0 ... <user's words>`;
//! a user's program takes these out wherever they stand (`--name value` or `--name=value`)
//! and keeps the rest, in order, for itself. The meanings are aurora-host's (its `--help`).

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};

use crate::setup::{Backend, XclbinArg};

/// The deployment's options of one host program.
#[derive(Debug, Clone, PartialEq)]
pub struct DeploymentOptions {
    /// One per rank, in rank order (`--xclbin PATH` or `--xclbin DEVICE=PATH`).
    pub xclbins: Vec<String>,
    pub topology: Option<PathBuf>,
    /// "sim", "xrt" or "xrt-sim".
    pub backend: String,
    pub bdfs: Vec<String>,
    pub timeout: Duration,
    pub record_calls: Option<PathBuf>,
    pub channel_cycles: Option<u64>,
    pub mpirun: String,
    /// sim: the receiving side of every link pauses this long every 64 words (0: none).
    pub throttle_us: u64,
    /// sim: only these devices' ranks slow their receiving side (`--throttle-device`,
    /// repeatable; empty: every rank), so a slow consumer meets fast producers.
    pub throttle_devices: Vec<String>,
    /// Set by the launcher for its ranks on a terminal (progress lines).
    pub progress_lines: bool,
}

impl Default for DeploymentOptions {
    fn default() -> Self {
        DeploymentOptions {
            xclbins: Vec::new(),
            topology: None,
            backend: "sim".into(),
            bdfs: Vec::new(),
            timeout: Duration::from_secs(10),
            record_calls: None,
            channel_cycles: None,
            mpirun: "mpirun".into(),
            throttle_us: 0,
            throttle_devices: Vec::new(),
            progress_lines: false,
        }
    }
}

/// The options that take a value.
const VALUED: [&str; 10] = [
    "--xclbin",
    "--topology",
    "--backend",
    "--bdf",
    "--timeout-s",
    "--record-calls",
    "--channel-cycles",
    "--mpirun",
    "--throttle-us",
    "--throttle-device",
];

/// Takes the deployment's options out of `args` (program name excluded); returns them and
/// the remaining arguments in their order. Everything after a `--` is the user's.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<(DeploymentOptions, Vec<String>)> {
    let mut o = DeploymentOptions::default();
    let mut rest = Vec::new();
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        if a == "--" {
            rest.push(a);
            rest.extend(it.by_ref());
            break;
        }
        if a == "--progress-lines" {
            o.progress_lines = true;
            continue;
        }
        let (name, inline) = match a.split_once('=') {
            Some((n, v)) => (n.to_string(), Some(v.to_string())),
            None => (a.clone(), None),
        };
        if !VALUED.contains(&name.as_str()) {
            rest.push(a);
            continue;
        }
        let value = match inline {
            Some(v) => v,
            None => it
                .next()
                .with_context(|| format!("{name} needs a value (see the host API's README)"))?,
        };
        set(&mut o, &name, value)?;
    }
    if !o.throttle_devices.is_empty() && o.throttle_us == 0 {
        bail!(
            "--throttle-device {} without --throttle-us: give the pause too (--throttle-us N)",
            o.throttle_devices.join(",")
        );
    }
    if o.xclbins.is_empty() {
        bail!("no --xclbin given: start the program with one --xclbin DEVICE=PATH per rank (as the deployment's run.sh does)");
    }
    Ok((o, rest))
}

fn set(o: &mut DeploymentOptions, name: &str, v: String) -> Result<()> {
    let number = |v: &str| -> Result<u64> {
        v.parse()
            .with_context(|| format!("{name} {v}: expected a whole number"))
    };
    match name {
        "--xclbin" => o.xclbins.push(v),
        "--topology" => o.topology = Some(PathBuf::from(v)),
        "--backend" => {
            if !matches!(v.as_str(), "sim" | "xrt" | "xrt-sim") {
                bail!("--backend {v}: expected sim, xrt or xrt-sim");
            }
            o.backend = v;
        }
        "--bdf" => o.bdfs.push(v),
        "--timeout-s" => {
            let s: f64 = v
                .parse()
                .ok()
                .filter(|s: &f64| *s > 0.0 && s.is_finite())
                .with_context(|| format!("--timeout-s {v}: expected seconds > 0"))?;
            o.timeout = Duration::from_secs_f64(s);
        }
        "--record-calls" => o.record_calls = Some(PathBuf::from(v)),
        "--channel-cycles" => o.channel_cycles = Some(number(&v)?),
        "--mpirun" => o.mpirun = v,
        "--throttle-us" => o.throttle_us = number(&v)?,
        "--throttle-device" => o.throttle_devices.push(v),
        _ => unreachable!("{name} is in VALUED"),
    }
    Ok(())
}

impl DeploymentOptions {
    /// The receive-side pause of `device`'s rank: `--throttle-us` on every rank, or only
    /// on the `--throttle-device` ones.
    pub fn throttle_of(&self, device: &str) -> u64 {
        if self.throttle_devices.is_empty() || self.throttle_devices.iter().any(|d| d == device) {
            self.throttle_us
        } else {
            0
        }
    }

    /// The xclbins as `setup::open` takes them.
    pub fn xclbin_args(&self) -> Vec<XclbinArg> {
        self.xclbins.iter().map(|x| XclbinArg::parse(x)).collect()
    }

    /// The backend of rank `rank`.
    pub fn backend(&self, rank: usize) -> Result<Backend> {
        Backend::parse(&self.backend, rank, &self.bdfs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    #[test]
    fn deployment_options_are_taken_out_wherever_they_stand() {
        let (o, rest) = parse(words(
            "--topology t.json run --xclbin fpga0=a.xclbin --rows 8 --backend=xrt-sim --xclbin fpga1=b.xclbin --throttle-us 20 -- --xclbin x",
        ))
        .unwrap();
        assert_eq!(o.topology, Some(PathBuf::from("t.json")));
        assert_eq!(o.xclbins, ["fpga0=a.xclbin", "fpga1=b.xclbin"]);
        assert_eq!(o.backend, "xrt-sim");
        assert_eq!(o.throttle_us, 20);
        assert_eq!(rest, words("run --rows 8 -- --xclbin x"));
    }

    #[test]
    fn bad_values_are_refused_by_name() {
        let e = parse(words("--xclbin a --backend fpga")).unwrap_err();
        assert!(e.to_string().contains("--backend fpga"), "{e}");
        let e = parse(words("--xclbin a --throttle-us")).unwrap_err();
        assert!(e.to_string().contains("--throttle-us needs a value"), "{e}");
        let e = parse(words("--topology t.json")).unwrap_err();
        assert!(e.to_string().contains("no --xclbin"), "{e}");
    }

    #[test]
    fn a_throttle_on_named_devices_only() {
        let (o, _) = parse(words(
            "--xclbin a --throttle-us 50 --throttle-device fpga1 --throttle-device=fpga3",
        ))
        .unwrap();
        assert_eq!(
            ["fpga0", "fpga1", "fpga2", "fpga3"].map(|d| o.throttle_of(d)),
            [0, 50, 0, 50]
        );
        let (all, _) = parse(words("--xclbin a --throttle-us 7")).unwrap();
        assert_eq!(all.throttle_of("fpga2"), 7);
        let e = parse(words("--xclbin a --throttle-device fpga1")).unwrap_err();
        assert!(e.to_string().contains("without --throttle-us"), "{e}");
    }
}
