//! A throttled receiver behind an emulated AuroraFlow link: flow control fires, nothing is
//! lost with the kernel's default FIFO, and the counters read through the `aurora` host API
//! agree with the RTL's published figures for the same FIFO parameters
//! (hw/aurora_flow/README.md, tests `:flow_control_*` and `:fifo_small`: the in-flight
//! window after an XOFF is 2 x (55 + 64) x 32/33 link beats with the 64-cycle channel,
//! and a 2 KiB RX FIFO, 32 words of headroom, overflows).

use std::sync::Arc;
use std::time::Duration;

use aurora::AuroraFlow;
use fpga_device::sim::aurora_cu::{connect_local, AuroraCu};
use fpga_device::sim::stream::Beat;
use serde_json::json;

/// The RTL testbench's channel delay (hw/aurora_flow/README.md "The Aurora core boundary").
const CHANNEL_CYCLES: u64 = 64;

fn rtl_in_flight() -> f64 {
    2.0 * (55.0 + CHANNEL_CYCLES as f64) * 32.0 / 33.0
}

fn pair(params: serde_json::Value) -> (Arc<AuroraCu>, Arc<AuroraCu>) {
    let p = params.as_object().unwrap().clone();
    let a = Arc::new(AuroraCu::new("aurora_flow_0", &p, 0.0, Some(CHANNEL_CYCLES)).unwrap());
    let b = Arc::new(AuroraCu::new("aurora_flow_1", &p, 0.0, Some(CHANNEL_CYCLES)).unwrap());
    connect_local(&a, &b, "fpga0", "fpga1");
    (a, b)
}

/// Sends `words` numbered words a -> b; b reads with a pause every `burst` words.
fn run(a: &Arc<AuroraCu>, b: &Arc<AuroraCu>, width: usize, words: u64, burst: u64) -> Vec<u64> {
    let sender = {
        let a = a.clone();
        std::thread::spawn(move || {
            for i in 0..words {
                let mut data = vec![0u8; width];
                data[..8].copy_from_slice(&i.to_le_bytes());
                a.transmit(Beat::new(data)).unwrap();
            }
            a.tx_sender().unwrap().close().unwrap();
        })
    };
    let mut got = Vec::new();
    while let Some(beat) = b.receive().unwrap() {
        got.push(u64::from_le_bytes(beat.data[..8].try_into().unwrap()));
        if (got.len() as u64).is_multiple_of(burst) {
            std::thread::sleep(Duration::from_micros(300));
        }
    }
    sender.join().unwrap();
    got
}

#[test]
fn throttled_receiver_is_paused_without_loss() {
    let (a, b) = pair(json!({"fifo_width": 64, "rx_fifo_size": 65536}));
    let words = 20_000;
    let got = run(&a, &b, 64, words, 700);
    assert_eq!(got, (0..words).collect::<Vec<_>>(), "every word, in order");

    let rx = AuroraFlow::new("aurora_flow_1", &*b);
    let tx = AuroraFlow::new("aurora_flow_0", &*a);
    let c = rx.counters().unwrap();
    assert_eq!(c.fifo_rx_overflow, 0);
    assert!(c.nfc_full_trigger >= 5, "XOFF fired: {c:?}");
    assert_eq!(
        c.nfc_full_trigger, c.nfc_empty_trigger,
        "one XON per XOFF after the drain"
    );
    assert_eq!(c.rx_count as u64, words);
    assert_eq!(tx.counters().unwrap().tx_count as u64, words);
    let expect = rtl_in_flight();
    assert!(
        (c.nfc_latency as f64 - expect).abs() <= 4.0,
        "NFC_LATENCY_COUNT {} vs the RTL's {expect:.1}",
        c.nfc_latency
    );
    // Registers decoded as the kernel reports them.
    assert!(rx.core_status_ok(Duration::from_millis(100)).unwrap());
    let t = rx.fifo_thresholds().unwrap();
    assert_eq!((t.prog_full, t.prog_empty), (512, 128));
    let cfg = rx.configuration().unwrap();
    assert_eq!((cfg.fifo_width, cfg.rx_fifo_depth), (64, 1024));
    // COUNTER_RESET zeroes them.
    rx.reset_counters().unwrap();
    let c = rx.counters().unwrap();
    assert_eq!((c.nfc_full_trigger, c.rx_count, c.nfc_latency), (0, 0, 0));
}

#[test]
fn small_rx_fifo_overflows_like_the_rtl() {
    // 2 KiB at 32 B: 64 words, XOFF at 32 -> 32 words of headroom for ~231 in flight.
    let (a, b) = pair(json!({"fifo_width": 32, "rx_fifo_size": 2048}));
    let words = 5_000;
    let got = run(&a, &b, 32, words, 50);
    let c = AuroraFlow::new("aurora_flow_1", &*b).counters().unwrap();
    let lost = words - got.len() as u64;
    assert!(lost > 0, "the headroom is too small: words must be lost");
    assert_eq!(
        c.fifo_rx_overflow as u64, lost,
        "FIFO_RX_OVERFLOW_COUNT = words lost"
    );
    assert!(
        got.windows(2).all(|w| w[0] < w[1]),
        "survivors stay in order"
    );
    let expect = rtl_in_flight();
    assert!(
        (c.nfc_latency as f64 - expect).abs() <= 4.0,
        "NFC_LATENCY_COUNT {} vs the RTL's {expect:.1}",
        c.nfc_latency
    );
}
