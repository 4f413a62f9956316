//! What `bench` prints on a ring: per message size the path, whether the payload came back
//! bit-exact, whether both ends of every cable agree, and per hop its counters.

use std::fmt::Write;

use crate::ring::Sample;

pub fn text(samples: &[Sample]) -> String {
    let mut out = String::new();
    for s in samples {
        for l in &s.lanes {
            let _ = writeln!(
                out,
                "ring {} {} B x {}: {} -> {} over {} hops: {}, ring latency {:.3} us, {:.2} Gbit/s",
                s.mode,
                s.message_size,
                s.iterations,
                l.origin,
                l.receiver,
                l.hops,
                if l.byte_errors == 0 {
                    "payload bit-exact".to_string()
                } else {
                    format!("{} byte(s) differ", l.byte_errors)
                },
                l.latency_s * 1e6,
                l.throughput_gbit_s
            );
        }
        let _ = writeln!(
            out,
            "ring {} {} B: {}",
            s.mode,
            s.message_size,
            if s.inconsistent.is_empty() {
                format!(
                    "{} cable ends: TX_COUNT of each sender = RX_COUNT of its receiver, no overflow",
                    s.hops.len()
                )
            } else {
                s.inconsistent.join("; ")
            }
        );
        for h in &s.hops {
            let _ = writeln!(
                out,
                "  hop {} -> {}:{} (rank {} on {}): TX {} RX {} frames {} XOFF {} XON {} overflow {} latency {:.1} ns",
                h.from,
                h.device,
                h.port,
                h.rank,
                h.host,
                h.tx_count,
                h.rx_count,
                h.frames,
                h.xoff,
                h.xon,
                h.rx_overflow,
                s.hop_latency_ns(h)
            );
        }
    }
    out
}
