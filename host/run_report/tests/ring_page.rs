//! The ring page (`aurora-host bench` on a ring writes it beside hops.json), rendered from a
//! ring built here the way the deploy tool cables one: QSFP 1 of card i to QSFP 0 of card
//! i+1, three cards per node, card 0 benchmarking.

use run_report::ring::{Hop, RingLane, Sample};

/// PG074's 55 user cycles plus 10 of 5 m of fibre.
const HOP_CYCLES: u64 = 65;
const CLOCK_MHZ: f64 = 402.832_031_25;

fn ring(n: usize, words: u32) -> Sample {
    let mut hops = Vec::new();
    for i in 0..n {
        let (prev, next) = ((i + n - 1) % n, (i + 1) % n);
        for (port, from) in [(0, format!("fpga{prev}:1")), (1, format!("fpga{next}:0"))] {
            hops.push(Hop {
                device: format!("fpga{i}"),
                rank: i as i32,
                host: format!("n{:02}", i / 3 + 1),
                port,
                from,
                tx_count: words,
                rx_count: words,
                xoff: 0,
                xon: 0,
                nfc_latency: 0,
                rx_overflow: 0,
                frames: 0,
                first_cycles: HOP_CYCLES,
                span_cycles: words as u64 * 2,
            });
        }
    }
    let lane = |receiver: &str, origin: &str| RingLane {
        receiver: receiver.into(),
        origin: origin.into(),
        hops: n,
        byte_errors: 0,
        latency_s: (n as u64 * HOP_CYCLES) as f64 / (CLOCK_MHZ * 1e6),
        throughput_gbit_s: 97.5,
    };
    Sample {
        mode: "throughput".into(),
        message_size: words as u64 * 64,
        repetition: 0,
        iterations: 1,
        link_clock_mhz: CLOCK_MHZ,
        lanes: vec![lane("fpga0:0", "fpga0:1"), lane("fpga0:1", "fpga0:0")],
        hops,
        inconsistent: vec![],
    }
}

fn count(page: &str, what: &str) -> usize {
    page.matches(what).count()
}

#[test]
fn every_card_on_its_node_and_every_cable_direction_is_drawn() {
    let s = ring(12, 256);
    let page = run_report::ring_page::render("aurora_ring_12", &[s]);
    assert_eq!(count(&page, "class=\"ring-card\""), 12);
    assert_eq!(count(&page, "class=\"ring-hop\""), 24);
    assert_eq!(count(&page, "<tr class=\"hop\""), 24);
    assert!(
        page.contains("data-cards=\"12\" data-nodes=\"4\""),
        "{page}"
    );
    for node in ["n01", "n02", "n03", "n04"] {
        assert_eq!(count(&page, &format!("data-node=\"{node}\"")), 3, "{node}");
    }
    // the cards in ring order: fpga1 follows fpga0, fpga11 closes the ring
    let pos = |d: &str| page.find(&format!("data-device=\"{d}\"")).unwrap();
    assert!(
        pos("fpga0") < pos("fpga1") && pos("fpga1") < pos("fpga2") && pos("fpga10") < pos("fpga11")
    );
    assert!(
        !page.contains("#c33\" stroke-width=\"3\""),
        "no cable marked bad"
    );
}

#[test]
fn the_figures_stand_beside_the_papers_ring() {
    let page = run_report::ring_page::render("aurora_ring_48", &[ring(48, 16384)]);
    // 65 cycles of 402.83 MHz: 161.4 ns per hop; 48 hops 7.745 µs
    assert!(page.contains(">161.4 ns<"), "{page}");
    assert!(page.contains(">7.745 µs<"), "{page}");
    assert!(page.contains(">95.9 Gbit/s<"), "the paper's 48-card ring");
    assert!(page.contains("256 GiB"));
    assert_eq!(count(&page, "data-source=\"paper-measured\"><td>"), 2);
}

#[test]
fn a_cable_whose_ends_disagree_is_marked() {
    let mut s = ring(6, 100);
    s.hops[5].rx_count = 99; // fpga2:1, fed by fpga3:0
    s.inconsistent = vec!["cable fpga3:0 -> fpga2:1: TX_COUNT 100 at fpga3:0 (rank 3), RX_COUNT 99 at fpga2:1 (rank 2)".into()];
    let page = run_report::ring_page::render("r", &[s]);
    assert_eq!(
        count(&page, "stroke=\"#c33\" stroke-width=\"3\""),
        1,
        "{page}"
    );
    assert!(page.contains("class=\"bad\""));
}
