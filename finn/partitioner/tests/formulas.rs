//! The Rust estimate formulas against FINN's own estimate reports (exported by
//! finn/flow/export_estimates.py from finn-plus 1.6.1): same folding, same figures.

mod common;

use finn_partitioner::cost::{self, current_fold};
use finn_partitioner::estimates::Estimates;
use finn_partitioner::resources::RES_NAMES;

fn data(name: &str) -> Estimates {
    common::estimates(name)
}

/// Every modelled layer reproduces FINN's cycles and resources exactly; returns how
/// many layers were checked with their resources.
fn check(est: &Estimates) -> usize {
    let mut modelled = 0;
    for l in &est.layers {
        let c = cost::estimate(l, current_fold(l), "xcu280-fsvh2892-2L-e").unwrap();
        assert_eq!(c.cycles, l.cycles, "cycles of {} ({})", l.name, l.op_type);
        if c.modelled {
            modelled += 1;
            for (r, name) in RES_NAMES.iter().enumerate() {
                assert_eq!(
                    c.res.get(r),
                    l.res.get(r),
                    "{name} of {} ({})",
                    l.name,
                    l.op_type
                );
            }
        }
        assert_eq!(
            c.out_stream_bits, l.out_stream_bits,
            "output stream width of {}",
            l.name
        );
    }
    modelled
}

#[test]
fn tiny_network_matches_finn_report() {
    assert!(check(&data("tiny_estimates.json")) >= 15);
}

#[test]
fn mobilenet_auto_folding_matches_finn_report() {
    assert!(check(&data("mobilenet_v1_estimates.json")) >= 43);
}

/// FINN's report for the folding our throughput objective chose on two U280s
/// (parallel windows, VVAU SIMD 3, unfolded MVAUs): the folding was applied with
/// finn/flow/run_step.py apply_folding_config and re-estimated by FINN.
#[test]
fn mobilenet_partitioner_folding_matches_finn_report() {
    let est = data("mobilenet_v1_plan_folding_estimates.json");
    let pw = est
        .layers
        .iter()
        .filter(|l| l.attrs.get("parallel_window").and_then(|v| v.as_i64()) == Some(1))
        .count();
    assert!(pw >= 5, "the fixture exercises parallel windows");
    assert!(check(&est) >= 43);
}

/// MVAUs as HLS with LUT multipliers (the paper's choice): FINN-R LUT model.
#[test]
fn mobilenet_hls_lut_mvau_matches_finn_report() {
    let est = data("mobilenet_v1_lut_estimates.json");
    assert!(est.layers.iter().any(|l| l.op_type == "MVAU_hls"));
    assert!(check(&est) >= 43);
}
