//! The host program of apps/pipe on //deploy:pipe_2fpga, one rank per card. Rank 0
//! (fpga0) writes the input of producer_0, whose words cross the cable to consumer_0 on
//! fpga1; rank 1 (fpga1) also runs producer_1 -> consumer_1 on its own card. Rank 1 reads
//! both consumers' buffers and compares them with the input bytes; then every rank prints
//! its link counters.
//!
//!     pipe-host [--words N]     (64-bit words per pipe, a multiple of 8; default 1024)

use std::time::Duration;

use anyhow::{bail, Context, Result};
use auroraforge_host::{Arg, Buffer, Run, Session};

/// A consumer's 512-bit word holds 8 of a producer's 64-bit words.
const WORDS_PER_BEAT: usize = 8;
const TIMEOUT: Duration = Duration::from_secs(60);
const CABLE: &str = "fpga0.producer_0 -> fpga1.consumer_0 (cable)";
const ON_CARD: &str = "fpga1.producer_1 -> fpga1.consumer_1 (on card)";

fn main() {
    auroraforge_host::main(run)
}

fn words(args: &[String]) -> Result<usize> {
    let n = match args {
        [] => return Ok(1024),
        [flag, n] if flag == "--words" => n,
        _ => bail!("usage: pipe-host [--words N]"),
    };
    let n: usize = n.parse().context("--words: not a number")?;
    if n == 0 || !n.is_multiple_of(WORDS_PER_BEAT) {
        bail!("--words {n}: must be a positive multiple of {WORDS_PER_BEAT}");
    }
    Ok(n)
}

/// The input of pipe `pipe`: byte i is (7 i + pipe) mod 251, a prime, so no power-of-two
/// period hides a lost or repeated word.
fn input(words: usize, pipe: usize) -> Vec<u8> {
    let byte = |i: usize| ((7 * i + pipe) % 251) as u8;
    (0..words * 8).map(byte).collect()
}

/// Starts `cu` (a producer) on `src` for `words` words.
fn produce(s: &mut Session, cu: &str, src: &Buffer, words: usize) -> Result<Run> {
    let count = Arg::Scalar(words as u64);
    s.start(cu, &[("src", Arg::Buffer(src)), ("count", count)])
}

/// Starts `cu` (a consumer) on `dst` for the 512-bit words that `words` words fill.
fn consume(s: &mut Session, cu: &str, dst: &Buffer, words: usize) -> Result<Run> {
    let count = Arg::Scalar((words / WORDS_PER_BEAT) as u64);
    s.start(cu, &[("dst", Arg::Buffer(dst)), ("count", count)])
}

fn run(s: &mut Session, args: Vec<String>) -> Result<()> {
    let words = words(&args)?;
    if s.ranks() != 2 {
        bail!(
            "pipe-host runs on 2 ranks (fpga0, fpga1), not {}",
            s.ranks()
        );
    }
    let bytes = words * 8;
    s.reset_link_counters()?;
    if s.rank() == 0 {
        let src = s.alloc("producer_0", "src", bytes)?;
        s.write(&src, 0, &input(words, 0))?;
        // consumer_0 on fpga1 is running before its producer starts
        s.barrier();
        let p0 = produce(s, "producer_0", &src, words)?;
        s.wait(p0, TIMEOUT)?;
    } else {
        let dst0 = s.alloc("consumer_0", "dst", bytes)?;
        let c0 = consume(s, "consumer_0", &dst0, words)?;
        let dst1 = s.alloc("consumer_1", "dst", bytes)?;
        let c1 = consume(s, "consumer_1", &dst1, words)?;
        let src1 = s.alloc("producer_1", "src", bytes)?;
        s.write(&src1, 0, &input(words, 1))?;
        s.barrier();
        let p1 = produce(s, "producer_1", &src1, words)?;
        s.wait(p1, TIMEOUT)?;
        s.wait(c1, TIMEOUT)?;
        s.wait(c0, TIMEOUT)?;
        compare(s, &dst0, &input(words, 0), CABLE)?;
        compare(s, &dst1, &input(words, 1), ON_CARD)?;
    }
    // every word has arrived: the counters of both ends agree now
    s.barrier();
    for (port, c) in s.link_status()? {
        println!(
            "{} port {port}: tx_count {} rx_count {} fifo_rx_overflow {}",
            s.device_name(),
            c.tx_count,
            c.rx_count,
            c.fifo_rx_overflow
        );
    }
    Ok(())
}

/// Reads `buf` and prints whether it holds `expected`; a difference ends the run.
fn compare(s: &mut Session, buf: &Buffer, expected: &[u8], pipe: &str) -> Result<()> {
    let mut got = vec![0u8; expected.len()];
    s.read(buf, 0, &mut got)?;
    let first_difference = got.iter().zip(expected).position(|(g, e)| g != e);
    let equal = if first_difference.is_none() {
        "yes"
    } else {
        "no"
    };
    println!("{pipe}: {} bytes, equal: {equal}", got.len());
    if let Some(i) = first_difference {
        let (g, e) = (got[i], expected[i]);
        bail!("{pipe}: byte {i} is {g:#04x}, the input's is {e:#04x}");
    }
    Ok(())
}
