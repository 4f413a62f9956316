//! SLR placement inside a card (`slr.rs`) where it changes the result: per-SLR budgets
//! refuse a layer the whole card's budget admits, and a card's layers needing two SLRs end
//! beside the QSFP their cut leaves by. The SLR budgets here are the U280's, written out
//! from AMD DS963 v1.7 Table 1 (4,032 BRAM18 over three identical SLRs = 1,344 each), and
//! the AuroraFlow kernel's 26 BRAM36 (paper/figures.toml [area]); the expected placements are
//! worked out by hand in each test's comment, not taken from the code.

use crate::common;

use finn_partitioner::devices::{resolve_all_with, DeviceSpec};
use finn_partitioner::estimates::Estimates;
use finn_partitioner::resources::Res;
use finn_partitioner::slr::SlrSpec;
use finn_partitioner::topology::Topology;
use finn_partitioner::{partition, Objective, Options};

const U280_SLR_BRAM18: f64 = 4032.0 / 3.0;

/// A chain of layers with the given BRAM18 each (no LUT/DSP, one folding).
fn chain(brams: &[f64]) -> Estimates {
    let layers: Vec<serde_json::Value> = brams
        .iter()
        .enumerate()
        .map(|(i, b)| {
            serde_json::json!({
                "name": format!("L{i}"),
                "op_type": "StreamingFIFO_rtl",
                "preds": if i == 0 { vec![] } else { vec![format!("L{}", i - 1)] },
                "attrs": {},
                "in_stream_bits": 8,
                "out_stream_bits": 8,
                "out_bits_per_frame": 64,
                "cycles": 100,
                "res": {"LUT": 0.0, "FF": 0.0, "BRAM_18K": b, "URAM": 0.0, "DSP": 0.0},
            })
        })
        .collect();
    serde_json::from_value(serde_json::json!({
        "model": "slr_chain", "clk_ns": 4.0, "fpga_part": "xcu280-fsvh2892-2L-e",
        "layers": layers,
    }))
    .unwrap()
}

/// Two U280s in a chain; `fpga1_bram` its BRAM18 max_util.
fn devices(fpga1_bram: f64) -> Vec<finn_partitioner::devices::Device> {
    let spec = |name: &str, bram: f64| DeviceSpec {
        name: name.into(),
        platform: Some(common::U280.into()),
        kind: None,
        total: None,
        clk_mhz: 250.0,
        ports: None,
        max_util: Some(Res {
            lut: 0.8,
            ff: 0.8,
            bram18: bram,
            uram: 0.8,
            dsp: 0.8,
        }),
        min_util: None,
        reserve_link_kernels: None,
    };
    resolve_all_with(
        &[spec("fpga0", 0.8), spec("fpga1", fpga1_bram)],
        &common::boards(),
    )
    .unwrap()
}

/// The U280's SLRs, both QSFP cages in SLR2 (AMD UG1314 "Card Features").
fn u280_slrs() -> Vec<SlrSpec> {
    (0..3)
        .map(|s| SlrSpec {
            name: format!("SLR{s}"),
            total: Res {
                lut: 1_304_000.0 / 3.0,
                ff: 2_607_000.0 / 3.0,
                bram18: U280_SLR_BRAM18,
                uram: 320.0,
                dsp: 3008.0,
            },
            qsfp_ports: if s == 2 { vec![0, 1] } else { vec![] },
        })
        .collect()
}

fn opts(with_slrs: bool) -> Options {
    Options {
        objective: Objective::Balanced,
        slrs: if with_slrs {
            vec![u280_slrs(), u280_slrs()]
        } else {
            Vec::new()
        },
        ..Options::default()
    }
}

fn topo() -> Topology {
    serde_json::from_value(serde_json::json!({"kind": "chain"})).unwrap()
}

#[test]
fn a_layer_larger_than_any_slr_is_refused_though_the_card_admits_it() {
    // 1,200 BRAM18: the card holds 0.8 x 4,032 - 2 x 52 = 3,121.6, an SLR 0.8 x 1,344 =
    // 1,075.2 (SLR2 less the two link kernels: 971.2).
    let est = chain(&[100.0, 1200.0, 100.0]);
    let devs = devices(0.8);
    partition(&est, &devs, &topo(), &opts(false)).expect("whole-card budgets admit the plan");
    let err = partition(&est, &devs, &topo(), &opts(true))
        .expect_err("per-SLR budgets refuse it")
        .to_string();
    for want in [
        "card fpga",
        "layer L1 fits in no SLR",
        "SLR0 holds 1075 BRAM_18K for layers, the layer needs 1200",
        "SLR1 holds 1075 BRAM_18K",
        "SLR2 holds 971 BRAM_18K",
    ] {
        assert!(err.contains(want), "{want:?} not in: {err}");
    }
}

#[test]
fn a_card_over_two_slrs_ends_beside_its_qsfp_and_counts_the_crossings() {
    // fpga1 may use 0.1 of its BRAM (403.2 - 104 = 299.2 for layers), so the balanced plan
    // puts L0..L2 (1,600) on fpga0 and L3 on fpga1. fpga0 needs two SLRs (an SLR holds
    // 1,075.2; SLR2 971.2 beside the link kernels): SLR1 = L0 + L1 (1,000), SLR2 = L2 (600),
    // whose cut leaves from SLR2's QSFP: 1 crossing. Starting at SLR0 would cost 2 (SLR0 ->
    // SLR1, SLR1 -> the QSFP in SLR2). fpga1's SLR2 keeps 0.1 x 1,344 - 104 = 30.4 for
    // layers, too little for L3 (50): L3 goes to SLR1, one crossing from the QSFP.
    let est = chain(&[500.0, 500.0, 600.0, 50.0]);
    let plan = partition(&est, &devices(0.1), &topo(), &opts(true)).unwrap();
    let v = serde_json::to_value(&plan).unwrap();
    let place: Vec<(&str, &str)> = v["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| (l["device"].as_str().unwrap(), l["slr"].as_str().unwrap()))
        .collect();
    assert_eq!(
        place,
        [
            ("fpga0", "SLR1"),
            ("fpga0", "SLR1"),
            ("fpga0", "SLR2"),
            ("fpga1", "SLR1")
        ]
    );
    let d0 = &v["devices"][0]["slrs"];
    assert_eq!(d0["crossings"], 1);
    assert_eq!(d0["runs"][0]["slr"], "SLR1");
    assert_eq!(d0["runs"][0]["last_layer"], "L1");
    assert_eq!(d0["runs"][1]["first_layer"], "L2");
    // SLR2: 600 + the two link kernels' 104 of 1,344
    let u = d0["runs"][1]["utilization"]["BRAM_18K"].as_f64().unwrap();
    assert!((u - 704.0 / U280_SLR_BRAM18).abs() < 1e-9, "{u}");
    assert_eq!(v["devices"][1]["slrs"]["crossings"], 1);
}

#[test]
fn without_slrs_the_plan_has_no_slr_keys() {
    let est = chain(&[500.0, 500.0, 600.0, 50.0]);
    let plan = partition(&est, &devices(0.1), &topo(), &opts(false)).unwrap();
    let text = serde_json::to_string(&plan).unwrap();
    assert!(
        !text.contains("\"slr\":") && !text.contains("\"slrs\":"),
        "{text}"
    );
}

#[test]
fn min_cut_moves_a_layer_to_the_next_card_when_the_slrs_cannot_hold_it() {
    // Three layers of 1,000 BRAM18: one card's budget (3,121.6) holds all three, so min-cut
    // keeps them on fpga0 with no cut. Per SLR a card holds two (SLR0 and SLR1 1,075.2 each,
    // SLR2 971.2 beside the link kernels): the plan must cut once.
    let est = chain(&[1000.0, 1000.0, 1000.0]);
    let devs = devices(0.8);
    let with = |slrs: bool| {
        let o = Options {
            objective: Objective::MinCut,
            ..opts(slrs)
        };
        serde_json::to_value(partition(&est, &devs, &topo(), &o).unwrap()).unwrap()
    };
    let whole = with(false);
    assert_eq!(whole["cuts"].as_array().unwrap().len(), 0);
    assert_eq!(whole["devices"][0]["layers"].as_array().unwrap().len(), 3);
    let per_slr = with(true);
    assert_eq!(per_slr["cuts"].as_array().unwrap().len(), 1, "{per_slr}");
    for d in per_slr["devices"].as_array().unwrap() {
        assert!(d["layers"].as_array().unwrap().len() <= 2, "{d}");
    }
    // every layer in an SLR, no SLR over 0.8 of its 1,344 (SLR2: less 104)
    let mut used: std::collections::BTreeMap<(String, String), f64> = Default::default();
    for l in per_slr["layers"].as_array().unwrap() {
        let key = (
            l["device"].to_string(),
            l["slr"].as_str().unwrap().to_string(),
        );
        *used.entry(key).or_default() += l["res"]["BRAM_18K"].as_f64().unwrap();
    }
    for ((_, slr), b) in used {
        let links = if slr == "SLR2" { 104.0 } else { 0.0 };
        assert!(b + links <= 0.8 * U280_SLR_BRAM18, "{slr}: {b}");
    }
}

#[test]
fn the_mip_plan_is_refused_when_a_layer_fits_no_slr() {
    // The throughput objective solves with the MIP over whole cards; the SLR split after it
    // refuses the same 1,200-BRAM18 layer, naming the card, each SLR and the layer.
    let est = chain(&[100.0, 1200.0, 100.0]);
    let o = |slrs: bool| Options {
        objective: Objective::Throughput,
        ..opts(slrs)
    };
    let devs = devices(0.8);
    partition(&est, &devs, &topo(), &o(false)).expect("whole-card budgets admit the plan");
    let err = partition(&est, &devs, &topo(), &o(true))
        .expect_err("per-SLR budgets refuse it")
        .to_string();
    assert!(
        err.contains("layer L1 fits in no SLR")
            && err.contains("SLR2 holds 971 BRAM_18K for layers, the layer needs 1200")
            && err.starts_with("card fpga"),
        "{err}"
    );
}
