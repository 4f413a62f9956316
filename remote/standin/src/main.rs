//! pnr_standin: stands in for a place & route run where the real tools are absent. It
//! takes `--seconds S` of wall time (sleeping: the time a long action holds a worker, not
//! its CPU) and writes a bitstream-like file whose every byte follows from the input file's
//! content and the index, so the same action gives the same bytes on any machine.

mod bitstream;

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};

const USAGE: &str =
    "usage: pnr_standin --input FILE --index I --seconds S --out FILE.bit [--kib N]";

struct Args {
    input: PathBuf,
    index: u32,
    seconds: f64,
    out: PathBuf,
    kib: usize,
}

fn parse(mut it: impl Iterator<Item = String>) -> Result<Args> {
    let (mut input, mut index, mut seconds, mut out) = (None, None, None, None);
    let mut kib = bitstream::DEFAULT_KIB;
    while let Some(flag) = it.next() {
        let value = it.next().with_context(|| format!("{flag} needs a value"))?;
        let bad = |what: &str| format!("{flag} `{value}`: expected {what}");
        match flag.as_str() {
            "--input" => input = Some(PathBuf::from(&value)),
            "--index" => index = Some(value.parse().with_context(|| bad("an integer >= 0"))?),
            "--seconds" => {
                let s: f64 = value.parse().with_context(|| bad("seconds"))?;
                if !(0.0..=86_400.0).contains(&s) {
                    bail!("{}", bad("0 to 86400 seconds"));
                }
                seconds = Some(s);
            }
            "--out" => out = Some(PathBuf::from(&value)),
            "--kib" => kib = value.parse().with_context(|| bad("a size in KiB"))?,
            other => bail!("unknown argument `{other}`"),
        }
    }
    Ok(Args {
        input: input.context("--input is required")?,
        index: index.context("--index is required")?,
        seconds: seconds.context("--seconds is required")?,
        out: out.context("--out is required")?,
        kib,
    })
}

fn run(args: Args) -> Result<()> {
    let netlist = std::fs::read(&args.input)
        .with_context(|| format!("reading the input {}", args.input.display()))?;
    std::thread::sleep(Duration::from_secs_f64(args.seconds));
    let bytes = bitstream::derive(&netlist, args.index, args.kib);
    std::fs::write(&args.out, bytes).with_context(|| format!("writing {}", args.out.display()))?;
    Ok(())
}

fn main() {
    let args = match parse(std::env::args().skip(1)) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("pnr_standin: {e:#}\n{USAGE}");
            std::process::exit(2);
        }
    };
    if let Err(e) = run(args) {
        eprintln!("pnr_standin: {e:#}");
        std::process::exit(1);
    }
}
