//! Stream widths against FINN's own: tests/data/digits_stream_widths.json holds
//! finn-plus 1.6.1's `get_instream_width(0)` / `get_outstream_width(0)` of every layer of
//! the digits MLP (tests/data/digits_estimates.json, the estimates of //finn/digits) under
//! every folding the partitioner offers it, written by tests/stream_widths.py. An MVAU
//! takes SIMD inputs in and gives PE outputs out; LabelSelect gives one index per cycle
//! whatever its PE.

use crate::common;

use std::collections::HashMap;

use finn_partitioner::cost::{self, Fold};
use finn_partitioner::devices::{Device, DeviceSpec};
use finn_partitioner::estimates::Estimates;
use finn_partitioner::resources::Res;
use finn_partitioner::topology::Topology;
use finn_partitioner::{partition, widths, Objective, Options};
use serde_json::Value;

const U280_PART: &str = "xcu280-fsvh2892-2L-e";

/// FINN's (in, out) widths by (layer, PE, SIMD); SIMD is -1 for ops without one.
fn finn_widths() -> HashMap<(String, i64, i64), (u64, u64)> {
    let path = common::data_dir().join("digits_stream_widths.json");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(doc["finn"], "finn-plus 1.6.1");
    let mut m = HashMap::new();
    for c in doc["cases"].as_array().unwrap() {
        let key = (
            c["layer"].as_str().unwrap().to_string(),
            c["PE"].as_i64().unwrap(),
            c["SIMD"].as_i64().unwrap_or(-1),
        );
        let w = (
            c["in_stream_bits"].as_u64().unwrap(),
            c["out_stream_bits"].as_u64().unwrap(),
        );
        m.insert(key, w);
    }
    m
}

fn digits() -> Estimates {
    common::estimates("digits_estimates.json")
}

fn has_simd(op_type: &str) -> bool {
    op_type.starts_with("MVAU")
}

#[test]
fn every_offered_folding_has_finn_stream_widths() {
    let est = digits();
    let finn = finn_widths();
    assert_eq!(finn.len(), 148, "fixture and estimates out of step");
    for ((name, pe, simd), (fin, fout)) in &finn {
        let l = est.layers.iter().find(|l| &l.name == name).unwrap();
        let simd = if *simd < 0 {
            cost::current_fold(l).simd
        } else {
            *simd
        };
        let f = Fold::new(*pe, simd, false);
        let ctx = format!("{name} PE={pe} SIMD={simd}");
        assert_eq!(widths::in_stream_bits(l, f), *fin, "input of {ctx}");
        let c = cost::estimate(l, f, U280_PART).unwrap();
        assert_eq!(c.out_stream_bits, *fout, "output of {ctx}");
    }
}

fn u280s(n: usize, max_util: f64) -> Vec<Device> {
    let util = Res {
        lut: max_util,
        ff: max_util,
        bram18: max_util,
        uram: max_util,
        dsp: max_util,
    };
    (0..n)
        .map(|i| {
            DeviceSpec {
                name: format!("fpga{i}"),
                platform: Some(common::U280.into()),
                kind: None,
                total: None,
                clk_mhz: 250.0,
                ports: None,
                max_util: Some(util),
                min_util: None,
                reserve_link_kernels: None,
            }
            .resolve_with(&common::boards())
            .unwrap()
        })
        .collect()
}

/// The throughput objective unfolds the MLP far (the partitioner once sized its input
/// at PE x 16 = 1024 bits for a 512-bit frame, and LabelSelect's output at 80 bits for a
/// 40-bit frame): every stream of the plan, and every cut, is FINN's width for the
/// folding chosen.
#[test]
fn digits_throughput_plan_has_finn_stream_widths() {
    let est = digits();
    let finn = finn_widths();
    let opts = Options {
        objective: Objective::Throughput,
        ..Options::default()
    };
    let plan = partition(&est, &u280s(2, 0.8), &Topology::Chain, &opts).unwrap();
    let mut unfolded = false;
    for l in &plan.layers {
        let pe = l.folding["PE"].as_i64().unwrap();
        let simd = if has_simd(&l.op_type) {
            l.folding["SIMD"].as_i64().unwrap()
        } else {
            -1
        };
        unfolded |= pe > 1;
        let (fin, fout) = finn[&(l.name.clone(), pe, simd)];
        assert_eq!(l.out_stream_bits, fout, "output of {}", l.name);
        if l.name == "MVAU_rtl_0" {
            assert_eq!(l.in_stream_bits, fin, "graph input of {}", l.name);
            // never wider than one frame (8-bit pixels x 64)
            assert!(
                fin <= l.in_bits_per_frame,
                "{fin} > {}",
                l.in_bits_per_frame
            );
        }
        assert!(
            l.out_stream_bits <= l.out_bits_per_frame,
            "{}: {} bits per cycle for a {}-bit frame",
            l.name,
            l.out_stream_bits,
            l.out_bits_per_frame
        );
    }
    assert!(unfolded, "throughput should unfold the MLP");
    for c in &plan.cuts {
        let from = plan.layers.iter().find(|l| l.name == c.from_layer).unwrap();
        assert_eq!(
            c.stream_bits, from.out_stream_bits,
            "cut after {}",
            c.from_layer
        );
    }
}
