//! `action bench --stream BIN --frame BIN [--ap-mhz N] [--goal-gbps G]` (was
//! hw/aurora_flow/bench/run_bench.sh, which verilated the testbench itself, outside the
//! graph): the modelled AuroraFlow throughput and latency, measured like the paper (messages
//! 64 B .. 1 MiB) in streaming and framing mode, through the kernel RTL + behavioural Aurora
//! core + channel model. The two models are built by the graph (`verilator_link_bench` in
//! rules/verilator.bzl); this runs both at once, prints a Markdown table with the paper's
//! figures and the 64b/66b payload limit beside ours, and fails when the streaming rate at the
//! largest message is below the goal (>= 96 Gbit/s at 1 MiB), so the goal is a test.

use crate::util::{fail, Result};
use std::collections::BTreeMap;
use std::process::{Command, Stdio};

/// A later option wins: `./forge run //hw/aurora_flow:bench -- --ap-mhz 250` overrides the
/// target's own.
#[derive(clap::Args)]
#[command(args_override_self = true)]
pub struct Args {
    /// the streaming-mode model (USE_FRAMING=0)
    #[arg(long)]
    stream: String,
    /// the framing-mode model (USE_FRAMING=1)
    #[arg(long)]
    frame: String,
    /// the kernel clock, MHz (the models' +ap_mhz)
    #[arg(long, default_value = "300")]
    ap_mhz: String,
    /// the streaming throughput at the largest message that must be reached, Gbit/s
    #[arg(long, default_value = "96")]
    goal_gbps: String,
}

/// bytes -> (first_ns, last_ns) of the `RESULT framing=F width=W ap_mhz=M bytes=B
/// first_ns=X last_ns=Y` lines the testbench (sim/tb/tb_bench.sv) prints.
pub fn results(log: &str) -> BTreeMap<u64, (f64, f64)> {
    let mut rows = BTreeMap::new();
    for line in log.lines() {
        let Some(rest) = line.strip_prefix("RESULT ") else {
            continue;
        };
        let fields: BTreeMap<&str, &str> = rest
            .split_whitespace()
            .filter_map(|f| f.split_once('='))
            .collect();
        let num = |k: &str| fields.get(k).and_then(|v| v.parse::<f64>().ok());
        let bytes = fields.get("bytes").and_then(|v| v.parse::<u64>().ok());
        if let (Some(b), Some(first), Some(last)) = (bytes, num("first_ns"), num("last_ns")) {
            rows.insert(b, (first, last));
        }
    }
    rows
}

fn size_name(b: u64) -> String {
    if b < 1024 {
        format!("{b} B")
    } else if b < 1 << 20 {
        format!("{} KiB", b / 1024)
    } else {
        format!("{} MiB", b >> 20)
    }
}

/// The report, and whether the goal is met.
pub fn report(
    stream: &BTreeMap<u64, (f64, f64)>,
    frame: &BTreeMap<u64, (f64, f64)>,
    mhz: &str,
    goal: f64,
    goal_text: &str,
) -> std::result::Result<(String, bool), String> {
    let user_mhz = 25781.25 / 64.0;
    let raw = user_mhz * 256.0 / 1000.0; // 32 B per user-clock cycle
    let payload = 4.0 * 25.78125 * 64.0 / 66.0; // 64b/66b payload limit
    let payload_cc = payload * (1.0 - 8.0 / 10000.0); // minus clock compensation (model)
    let mut r = format!(
        "kernel clock {mhz} MHz, FIFO_WIDTH 64 B, link user clock {user_mhz:.2} MHz; \
         raw {raw:.2} Gbit/s, 64b/66b payload limit {payload:.2} Gbit/s \
         ({payload_cc:.2} with clock compensation)\n\n"
    );
    r += "| message | streaming latency (ns) | streaming Gbit/s | framing latency (ns) | framing Gbit/s |\n";
    r += "|---|---|---|---|---|\n";
    for (&b, &(s1, sl)) in stream {
        let Some(&(f1, fl)) = frame.get(&b) else {
            return Err(format!("the framing model reports no {b} B message"));
        };
        let bits = b as f64 * 8.0;
        r += &format!(
            "| {} | {s1:.1} | {:.2} | {f1:.1} | {:.2} |\n",
            size_name(b),
            bits / sl,
            bits / fl
        );
    }
    let Some((&big, &(_, sl))) = stream.iter().next_back() else {
        return Err("the streaming model printed no RESULT line".into());
    };
    let fl = frame.get(&big).map(|f| f.1).unwrap_or(f64::NAN);
    let bits = big as f64 * 8.0;
    let rate = bits / sl;
    let ok = rate >= goal;
    r += "\npaper (U280, hardware): streaming 0.51 us min latency (64 B), 94.88-95.03 Gbit/s at 1 MiB; framing 0.53 us\n";
    r += &format!(
        "model at {} MiB: streaming {rate:.2} Gbit/s = {:.2}% of the payload limit; framing {:.2} Gbit/s\n",
        big >> 20,
        100.0 * rate / payload,
        bits / fl
    );
    r += &format!(
        "goal >= {goal_text} Gbit/s at {} (streaming): {}\n",
        size_name(big),
        if ok { "met" } else { "NOT met" }
    );
    Ok((r, ok))
}

pub fn run(a: Args) -> Result {
    let Ok(goal) = a.goal_gbps.parse::<f64>() else {
        return fail(
            2,
            format!("bench: --goal-gbps {} is not a number", a.goal_gbps),
        );
    };
    let plusarg = format!("+ap_mhz={}", a.ap_mhz);
    // both models at once (one core each), as the script ran them
    let spawn = |bin: &str| {
        Command::new(bin)
            .arg(&plusarg)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
    };
    let (stream, frame) = match (spawn(&a.stream), spawn(&a.frame)) {
        (Ok(s), Ok(f)) => (s, f),
        (Err(e), _) | (_, Err(e)) => return fail(3, format!("bench: cannot run a model: {e}")),
    };
    let mut logs = vec![];
    for (bin, child) in [(&a.stream, stream), (&a.frame, frame)] {
        match child.wait_with_output() {
            Ok(o) if o.status.success() => {
                logs.push(String::from_utf8_lossy(&o.stdout).into_owned())
            }
            Ok(o) => {
                print!("{}", String::from_utf8_lossy(&o.stdout));
                return fail(1, format!("bench: `{bin} {plusarg}` failed ({})", o.status));
            }
            Err(e) => return fail(3, format!("bench: `{bin} {plusarg}`: {e}")),
        }
    }
    match report(
        &results(&logs[0]),
        &results(&logs[1]),
        &a.ap_mhz,
        goal,
        &a.goal_gbps,
    ) {
        Ok((text, ok)) => {
            print!("{text}");
            if ok {
                Ok(())
            } else {
                Err(crate::util::Exit(1))
            }
        }
        Err(e) => fail(3, format!("bench: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(framing: u8, bytes: u64, last_ns: f64) -> String {
        format!("RESULT framing={framing} width=64 ap_mhz=300 bytes={bytes} first_ns=510.00 last_ns={last_ns:.2}\n")
    }

    #[test]
    fn the_goal_is_checked_at_the_largest_message() {
        let mib = 1u64 << 20;
        // 1 MiB in 87,000 ns = 96.42 Gbit/s; in 88,000 ns = 95.33 Gbit/s
        let fast = format!("noise\n{}{}", line(0, 64, 600.0), line(0, mib, 87000.0));
        let slow = format!("{}{}", line(0, 64, 600.0), line(0, mib, 88000.0));
        let frame = format!("{}{}", line(1, 64, 650.0), line(1, mib, 90000.0));
        let (text, ok) = report(&results(&fast), &results(&frame), "300", 96.0, "96").unwrap();
        assert!(ok, "{text}");
        assert!(
            text.contains("| 1 MiB | 510.0 | 96.42 | 510.0 | 93.21 |"),
            "{text}"
        );
        assert!(
            text.contains("goal >= 96 Gbit/s at 1 MiB (streaming): met"),
            "{text}"
        );
        let (text, ok) = report(&results(&slow), &results(&frame), "300", 96.0, "96").unwrap();
        assert!(!ok);
        assert!(text.contains("(streaming): NOT met"), "{text}");
        assert!(report(&results(""), &results(&frame), "300", 96.0, "96").is_err());
    }
}
