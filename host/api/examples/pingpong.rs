//! The host API's example: a message from rank 0 to rank 1 over the cable on QSFP port 0.
//! Rank 0's `send_0` reads the message from its buffer onto the link, rank 1's `recv_0`
//! writes what arrives into its buffer (AuroraFlow's benchmark kernels, hw/hls/send.cpp and
//! recv.cpp). The scalars the program does not pass (iterations, ack_mode, frame_size) are
//! the description's defaults (topology.json "cus").
//!
//!     af-pingpong --xclbin fpga0=X0 --xclbin fpga1=X1 --topology topology.json \
//!         [--bytes N] [--out FILE] [--show-errors]
//!
//! `--out FILE`: rank 1 writes the bytes it received there. `--show-errors`: prints what
//! the API answers to an unknown CU, an unknown argument and a scalar without a default.

use std::time::Duration;

use anyhow::{bail, Context, Result};
use auroraforge_host::{Arg, Session};

fn main() {
    auroraforge_host::main(run)
}

struct Args {
    bytes: usize,
    out: Option<String>,
    show_errors: bool,
}

fn parse(words: Vec<String>) -> Result<Args> {
    let mut a = Args {
        bytes: 4096,
        out: None,
        show_errors: false,
    };
    let mut it = words.into_iter();
    while let Some(w) = it.next() {
        match w.as_str() {
            "--bytes" => a.bytes = it.next().context("--bytes N")?.parse()?,
            "--out" => a.out = Some(it.next().context("--out FILE")?),
            "--show-errors" => a.show_errors = true,
            other => bail!(
                "unknown argument {other} (af-pingpong [--bytes N] [--out FILE] [--show-errors])"
            ),
        }
    }
    Ok(a)
}

/// The message: byte i is i mod 251 (a prime, so no power-of-two period hides a lost word).
fn message(bytes: usize) -> Vec<u8> {
    (0..bytes).map(|i| (i % 251) as u8).collect()
}

fn run(s: &mut Session, words: Vec<String>) -> Result<()> {
    let a = parse(words)?;
    if s.ranks() != 2 {
        bail!("af-pingpong runs on two ranks, not {}", s.ranks());
    }
    let me = format!("rank {} ({})", s.rank(), s.device_name());
    if a.show_errors {
        show_errors(s, &me);
    }
    s.reset_link_counters()?;
    let size = Arg::Scalar(a.bytes as u64);
    let timeout = Duration::from_secs(30);
    if s.rank() == 1 {
        let buf = s.alloc("recv_0", "data_output", a.bytes)?;
        let run = s.start(
            "recv_0",
            &[("data_output", Arg::Buffer(&buf)), ("byte_size", size)],
        )?;
        // the receiver runs before the sender starts
        s.barrier();
        s.wait(run, timeout)?;
        let mut got = vec![0u8; a.bytes];
        s.read(&buf, 0, &mut got)?;
        if let Some(out) = &a.out {
            std::fs::write(out, &got).with_context(|| format!("--out {out}"))?;
        }
        let same = got == message(a.bytes);
        println!(
            "{me}: received {} bytes in {}, as sent: {same}",
            got.len(),
            buf.bank()
        );
    } else {
        let buf = s.alloc("send_0", "data_input", a.bytes)?;
        s.write(&buf, 0, &message(a.bytes))?;
        s.barrier();
        let run = s.start(
            "send_0",
            &[("data_input", Arg::Buffer(&buf)), ("byte_size", size)],
        )?;
        s.wait(run, timeout)?;
        println!("{me}: sent {} bytes from {}", a.bytes, buf.bank());
    }
    // every rank's counters after the message, then after a reset
    s.barrier();
    print_counters(s, &me, "after the message")?;
    s.reset_link_counters()?;
    print_counters(s, &me, "after reset")?;
    Ok(())
}

fn print_counters(s: &Session, me: &str, when: &str) -> Result<()> {
    for (port, c) in s.link_status()? {
        println!(
            "{me}: port {port} {when}: tx_count {} rx_count {} frames_received {} nfc_full {} nfc_empty {}",
            c.tx_count, c.rx_count, c.frames_received, c.nfc_full_trigger, c.nfc_empty_trigger
        );
    }
    Ok(())
}

fn show_errors(s: &mut Session, me: &str) {
    // recv_1 (QSFP port 1) has no defaults in the description: its iterations are missing
    let missing = s.alloc("recv_1", "data_output", 64).and_then(|b| {
        s.start(
            "recv_1",
            &[
                ("data_output", Arg::Buffer(&b)),
                ("byte_size", Arg::Scalar(64)),
            ],
        )
    });
    let errors = [
        s.start("no_such_cu", &[]).map(|_| ()),
        s.alloc("send_0", "no_such_arg", 64).map(|_| ()),
        missing.map(|_| ()),
    ];
    for e in errors.into_iter().filter_map(|r| r.err()) {
        println!("{me}: error: {e:#}");
    }
}
