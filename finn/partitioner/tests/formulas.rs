//! The Rust estimate formulas against FINN's own estimate reports (exported by
//! finn/flow/export_estimates.py from finn-plus 1.6.1): same folding, same figures.

use crate::common;

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

/// Every weight memory (BRAM/URAM/LUTRAM) and multiplier resource (DSP/LUT) the
/// partitioner may choose, priced by FINN's own estimate methods on the same layers
/// (tests/data/mobilenet_v1_type_variants.json, written by finn/flow/type_variants.py
/// from finn-plus 1.6.1's node_res_estimation): the Rust formulas give the same figures.
#[test]
fn resource_type_choices_match_finn_estimates() {
    use finn_partitioner::cost::{Compute, MemStyle};
    let text = std::fs::read_to_string(common::data_dir().join("mobilenet_v1_type_variants.json"))
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let cases = v["cases"].as_array().unwrap();
    let mut by_style = std::collections::BTreeMap::new();
    for case in cases {
        let est = data(case["estimates"].as_str().unwrap());
        let l = est
            .layers
            .iter()
            .find(|l| l.name == case["layer"].as_str().unwrap())
            .unwrap();
        let mut f = current_fold(l);
        f.mem = match case["ram_style"].as_str() {
            None => MemStyle::Exported,
            Some("block") => MemStyle::Block,
            Some("ultra") => MemStyle::Ultra,
            Some("distributed") => MemStyle::Distributed,
            Some(s) => panic!("unknown ram_style {s}"),
        };
        f.compute = match case["resType"].as_str() {
            None => Compute::Exported,
            Some("dsp") => Compute::Dsp,
            Some("lut") => Compute::Lut,
            Some(s) => panic!("unknown resType {s}"),
        };
        let c = cost::estimate(l, f, "xcu280-fsvh2892-2L-e").unwrap();
        for name in ["LUT", "BRAM_18K", "URAM", "DSP"] {
            let r = RES_NAMES.iter().position(|n| *n == name).unwrap();
            assert_eq!(
                c.res.get(r),
                case["res"][name].as_f64().unwrap(),
                "{name} of {} ({}) with {f:?}",
                l.name,
                l.op_type
            );
        }
        *by_style
            .entry((f.mem.attr(), f.compute.attr()))
            .or_insert(0) += 1;
    }
    // Each choice is exercised: URAM and LUTRAM weights, DSP and LUT multipliers.
    for key in [
        (Some("ultra"), None),
        (Some("distributed"), None),
        (Some("block"), None),
        (None, Some("dsp")),
        (None, Some("lut")),
        (Some("ultra"), Some("dsp")),
    ] {
        assert!(by_style.get(&key).copied().unwrap_or(0) >= 10, "{key:?}");
    }
    // The URAM choice moves weights out of BRAM for real: some layer needs URAMs.
    assert!(cases
        .iter()
        .any(|c| c["res"]["URAM"].as_f64().unwrap() > 0.0));
}
