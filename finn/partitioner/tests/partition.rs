//! Partitioning behaviour: contiguity, budgets, topologies, ports, objectives, and
//! optimality against an exhaustive search on small graphs.

use crate::common;

use finn_partitioner::devices::{self, Device, DeviceSpec};
use finn_partitioner::estimates::Estimates;
use finn_partitioner::plan::Plan;
use finn_partitioner::resources::Res;
use finn_partitioner::topology::{Link, Topology};
use finn_partitioner::{partition, Objective, Options};
use serde_json::json;

fn mobilenet() -> Estimates {
    common::estimates("mobilenet_v1_estimates.json")
}

fn u280s(n: usize, max_util: f64) -> Vec<Device> {
    (0..n)
        .map(|i| {
            DeviceSpec {
                name: format!("fpga{i}"),
                platform: Some(common::U280.into()),
                kind: None,
                total: None,
                clk_mhz: 250.0,
                ports: None,
                max_util: Some(Res {
                    lut: max_util,
                    ff: max_util,
                    bram18: max_util,
                    uram: max_util,
                    dsp: max_util,
                }),
                min_util: None,
                reserve_link_kernels: None,
            }
            .resolve_with(&common::boards())
            .unwrap()
        })
        .collect()
}

fn opts(objective: Objective) -> Options {
    Options {
        objective,
        ..Options::default()
    }
}

fn device_index(plan: &Plan, name: &str) -> usize {
    plan.devices.iter().position(|d| d.name == name).unwrap()
}

/// Along every dataflow edge the device index never decreases and steps by at most
/// one (chain contiguity).
fn assert_chain_contiguous(est: &Estimates, plan: &Plan) {
    let dev: std::collections::HashMap<&str, usize> = plan
        .layers
        .iter()
        .map(|l| (l.name.as_str(), device_index(plan, &l.device)))
        .collect();
    for l in &est.layers {
        for p in &l.preds {
            let (a, b) = (dev[p.as_str()], dev[l.name.as_str()]);
            assert!(
                b == a || b == a + 1,
                "edge {p} -> {} goes from device {a} to {b}",
                l.name
            );
        }
    }
}

#[test]
fn balanced_chain_on_two_u280s_is_contiguous_and_within_budget() {
    let est = mobilenet();
    let plan = partition(
        &est,
        &u280s(2, 0.8),
        &Topology::Chain,
        &opts(Objective::Balanced),
    )
    .unwrap();
    assert_chain_contiguous(&est, &plan);
    assert_eq!(plan.cuts.len(), 1);
    for d in &plan.devices {
        assert!(!d.layers.is_empty());
        for (r, u) in &d.utilization {
            assert!(*u <= 0.8 + 1e-9, "{r} on {} at {u}", d.name);
        }
    }
    assert!(plan.solver.optimal);
}

#[test]
fn ring_topology_is_accepted_where_finn_plus_raises() {
    let est = mobilenet();
    for n in [2, 3] {
        let plan = partition(
            &est,
            &u280s(n, 0.3),
            &Topology::Ring,
            &opts(Objective::Balanced),
        )
        .unwrap();
        assert_chain_contiguous(&est, &plan);
    }
}

#[test]
fn a_budget_no_partition_meets_names_resource_and_device() {
    let est = mobilenet();
    let err = partition(
        &est,
        &u280s(2, 0.05),
        &Topology::Chain,
        &opts(Objective::Balanced),
    )
    .unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains("infeasible"), "{msg}");
    assert!(msg.contains("BRAM_18K") || msg.contains("DSP"), "{msg}");
    assert!(msg.contains("fpga") || msg.contains("devices"), "{msg}");
}

#[test]
fn one_layer_too_big_for_every_device_is_named() {
    let est = mobilenet();
    let err = partition(
        &est,
        &u280s(4, 0.02),
        &Topology::Chain,
        &opts(Objective::Balanced),
    )
    .unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains("layer ") && msg.contains("fpga"), "{msg}");
}

#[test]
fn more_links_than_ports_is_an_error() {
    let devs = u280s(3, 0.8);
    let links = vec![
        Link {
            a: "fpga0".into(),
            a_port: 0,
            b: "fpga1".into(),
            b_port: 0,
        },
        Link {
            a: "fpga0".into(),
            a_port: 1,
            b: "fpga2".into(),
            b_port: 0,
        },
        Link {
            a: "fpga0".into(),
            a_port: 2,
            b: "fpga2".into(),
            b_port: 1,
        },
    ];
    let err = Topology::Links { links }.layout(&devs).unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains("fpga0") && msg.contains("port"), "{msg}");
}

#[test]
fn chain_needing_two_ports_on_a_one_port_device_is_an_error() {
    let mut devs = u280s(3, 0.8);
    devs[1].ports = 1;
    let msg = format!("{:#}", Topology::Chain.layout(&devs).unwrap_err());
    assert!(msg.contains("fpga1") && msg.contains("2 links"), "{msg}");
}

#[test]
fn switch_port_limit_binds() {
    // Budgets force at least two devices. With one port per device a switch can
    // connect only one pair, so a split over three devices is impossible.
    let est = mobilenet();
    let mut devs = u280s(3, 0.3);
    for d in &mut devs {
        d.ports = 1;
    }
    let plan = partition(&est, &devs, &Topology::Switch, &opts(Objective::Balanced)).unwrap();
    let used = plan.devices.iter().filter(|d| !d.layers.is_empty()).count();
    assert_eq!(used, 2, "one port per device allows exactly one link");
    let mut two_ports = u280s(3, 0.3);
    for d in &mut two_ports {
        d.ports = 2;
    }
    let plan3 = partition(
        &est,
        &two_ports,
        &Topology::Switch,
        &opts(Objective::Balanced),
    )
    .unwrap();
    let used3 = plan3
        .devices
        .iter()
        .filter(|d| !d.layers.is_empty())
        .count();
    assert_eq!(
        used3, 3,
        "with two ports the balanced plan spreads over all three"
    );
    // A budget that needs three devices fails with one port each.
    let mut tight = u280s(3, 0.2);
    for d in &mut tight {
        d.ports = 1;
    }
    assert!(partition(&est, &tight, &Topology::Switch, &opts(Objective::Balanced)).is_err());
}

#[test]
fn throughput_grows_with_cards_under_tight_budgets() {
    let est = mobilenet();
    let mut last = 0.0;
    let mut fps = Vec::new();
    for n in [2, 3, 4] {
        let plan = partition(
            &est,
            &u280s(n, 0.2),
            &Topology::Chain,
            &opts(Objective::Throughput),
        )
        .unwrap();
        assert_chain_contiguous(&est, &plan);
        assert!(
            plan.fps >= last - 1e-6,
            "{n} cards: {} FPS after {last}",
            plan.fps
        );
        last = plan.fps;
        fps.push(plan.fps);
    }
    assert!(fps[1] > fps[0] * 1.5, "{fps:?}");
    // The exported folding runs at FINN's figure; unfolding must beat it.
    let finn_fps = 250e6 / 113127.0;
    assert!(fps[0] > finn_fps, "{fps:?}");
}

// ---------------------------------------------------------------------------
// Exhaustive reference on small chains.

fn chain_estimates(res: &[(f64, f64)], bits: &[u64]) -> Estimates {
    let layers: Vec<_> = res
        .iter()
        .enumerate()
        .map(|(i, &(lut, dsp))| {
            json!({
                "name": format!("L{i}"), "op_type": "Other",
                "preds": if i == 0 { vec![] } else { vec![format!("L{}", i - 1)] },
                "out_bits_per_frame": bits[i], "cycles": 1000 + i as u64,
                "res": {"LUT": lut, "DSP": dsp},
            })
        })
        .collect();
    serde_json::from_value(json!({"clk_ns": 4.0, "layers": layers})).unwrap()
}

fn small_devices(n: usize, lut: f64, dsp: f64) -> Vec<Device> {
    let specs: Vec<DeviceSpec> = (0..n)
        .map(|i| DeviceSpec {
            name: format!("d{i}"),
            platform: None,
            kind: None,
            total: Some(Res {
                lut,
                ff: 1.0,
                bram18: 1.0,
                uram: 1.0,
                dsp,
            }),
            clk_mhz: 200.0,
            ports: Some(2),
            max_util: Some(Res {
                lut: 1.0,
                ff: 1.0,
                bram18: 1.0,
                uram: 1.0,
                dsp: 1.0,
            }),
            min_util: None,
            reserve_link_kernels: Some(false),
        })
        .collect();
    devices::resolve_all(&specs).unwrap()
}

/// All ways to cut a chain of `n` layers into at most `d` contiguous pieces, the
/// first piece on device 0.
fn splits(n: usize, d: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    fn rec(i: usize, n: usize, d: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if i == n {
            out.push(cur.clone());
            return;
        }
        let last = *cur.last().unwrap();
        for dev in [last, last + 1] {
            if dev < d {
                cur.push(dev);
                rec(i + 1, n, d, cur, out);
                cur.pop();
            }
        }
    }
    rec(1, n, d, &mut vec![0], &mut out);
    out
}

#[test]
fn balanced_and_min_cut_match_exhaustive_search() {
    let res = [
        (30.0, 2.0),
        (10.0, 9.0),
        (25.0, 1.0),
        (5.0, 5.0),
        (40.0, 3.0),
        (15.0, 8.0),
        (20.0, 2.0),
        (12.0, 6.0),
    ];
    let bits = [800, 300, 900, 100, 700, 200, 600, 50];
    let est = chain_estimates(&res, &bits);
    let devs = small_devices(3, 100.0, 20.0);
    let mut best_bal = f64::INFINITY;
    let mut best_cut = u64::MAX;
    for s in splits(res.len(), 3) {
        let mut use_ = [[0.0f64; 2]; 3];
        for (i, &d) in s.iter().enumerate() {
            use_[d][0] += res[i].0;
            use_[d][1] += res[i].1;
        }
        if use_.iter().any(|u| u[0] > 100.0 || u[1] > 20.0) {
            continue;
        }
        let bal = use_
            .iter()
            .map(|u| (u[0] / 100.0).max(u[1] / 20.0))
            .fold(0.0, f64::max);
        best_bal = best_bal.min(bal);
        let cut: u64 = (1..s.len())
            .filter(|&i| s[i] != s[i - 1])
            .map(|i| bits[i - 1])
            .sum();
        best_cut = best_cut.min(cut);
    }
    // Both solvers: the exact chain algorithm and the MIP.
    for solve in [partition, finn_partitioner::partition_with_mip] {
        let plan = solve(&est, &devs, &Topology::Chain, &opts(Objective::Balanced)).unwrap();
        let got_bal = plan
            .devices
            .iter()
            .map(|d| (d.resources.lut / 100.0).max(d.resources.dsp / 20.0))
            .fold(0.0, f64::max);
        assert!(
            (got_bal - best_bal).abs() < 1e-9,
            "{} {got_bal} vs exhaustive {best_bal}",
            plan.solver.method
        );
        let plan = solve(&est, &devs, &Topology::Chain, &opts(Objective::MinCut)).unwrap();
        let got_cut: u64 = plan.cuts.iter().map(|c| c.bits_per_frame).sum();
        assert_eq!(got_cut, best_cut, "{}", plan.solver.method);
    }
}

#[test]
fn branches_stay_contiguous_and_one_stream_per_link() {
    // a -> b -> d, a -> c -> d (a residual block), then e.
    let mk = |name: &str, preds: &[&str], lut: f64| {
        json!({"name": name, "op_type": "Other", "preds": preds, "out_bits_per_frame": 64,
               "cycles": 100, "res": {"LUT": lut}})
    };
    let est: Estimates = serde_json::from_value(json!({"clk_ns": 4.0, "layers": [
        mk("a", &[], 40.0), mk("b", &["a"], 40.0), mk("c", &["a"], 40.0),
        mk("d", &["b", "c"], 40.0), mk("e", &["d"], 40.0)
    ]}))
    .unwrap();
    // No cut may split the branch region (two streams over one link), so a, b, c, d
    // (160 LUT) must share a device: infeasible at 150 per device, feasible at 170.
    let msg = format!(
        "{:#}",
        partition(
            &est,
            &small_devices(3, 150.0, 1.0),
            &Topology::Chain,
            &opts(Objective::Balanced)
        )
        .unwrap_err()
    );
    assert!(msg.contains("LUT"), "{msg}");
    let plan = partition(
        &est,
        &small_devices(3, 170.0, 1.0),
        &Topology::Chain,
        &opts(Objective::Balanced),
    )
    .unwrap();
    assert_chain_contiguous(&est, &plan);
    let on = |n: &str| {
        plan.layers
            .iter()
            .find(|l| l.name == n)
            .unwrap()
            .device
            .clone()
    };
    assert!(["b", "c", "d"].iter().all(|n| on(n) == on("a")));
    assert_ne!(on("e"), on("a"));
    // Between consecutive devices only one stream may cross.
    for k in 0..2 {
        let n = plan
            .cuts
            .iter()
            .filter(|c| {
                device_index(&plan, &c.from_device) <= k && device_index(&plan, &c.to_device) > k
            })
            .count();
        assert!(n <= 1, "{n} streams cross cut {k}");
    }
}

#[test]
fn exact_chain_algorithm_agrees_with_the_mip() {
    let est = mobilenet();
    for n in [2, 3, 4] {
        for obj in [Objective::Balanced, Objective::MinCut] {
            let fast = partition(&est, &u280s(n, 0.3), &Topology::Chain, &opts(obj)).unwrap();
            let mip = finn_partitioner::partition_with_mip(
                &est,
                &u280s(n, 0.3),
                &Topology::Chain,
                &opts(obj),
            )
            .unwrap();
            assert_eq!(fast.solver.method, "chain");
            assert_eq!(mip.solver.method, "mip");
            let score = |p: &Plan| match obj {
                Objective::MinCut => p.cuts.iter().map(|c| c.bits_per_frame as f64).sum::<f64>(),
                _ => p
                    .devices
                    .iter()
                    .flat_map(|d| ["LUT", "BRAM_18K", "URAM", "DSP"].map(|r| d.resources_util(r)))
                    .fold(0.0, f64::max),
            };
            assert!(
                (score(&fast) - score(&mip)).abs() < 1e-6,
                "{n} devices {obj:?}: {} vs {}",
                score(&fast),
                score(&mip)
            );
        }
    }
}

#[test]
fn synthetic_500_layers_on_48_devices_is_fast() {
    let layers: Vec<_> = (0..500)
        .map(|i| {
            let f = 0.002 + 0.018 * (((i * 7919) % 1000) as f64 / 1000.0);
            json!({"name": format!("L{i}"), "op_type": "Synthetic",
                   "preds": if i == 0 { vec![] } else { vec![format!("L{}", i - 1)] },
                   "out_bits_per_frame": 8192 * (1 + (i % 5) as u64), "cycles": 50000,
                   "res": {"LUT": 1_304_000.0 * f, "BRAM_18K": (4032.0 * f).round(), "DSP": (9024.0 * f).round()}})
        })
        .collect();
    let est: Estimates = serde_json::from_value(json!({"clk_ns": 4.0, "layers": layers})).unwrap();
    let t = std::time::Instant::now();
    let plan = partition(
        &est,
        &u280s(48, 0.8),
        &Topology::Chain,
        &opts(Objective::Balanced),
    )
    .unwrap();
    assert!(t.elapsed().as_secs_f64() < 10.0);
    assert!(plan.solver.optimal);
    assert_eq!(
        plan.devices.iter().filter(|d| !d.layers.is_empty()).count(),
        48
    );
}

#[test]
fn throughput_is_lexicographic_fps_then_balance_against_exhaustive_search() {
    // Devices at different clocks make the frame period depend on the placement; among
    // the splits with the best period the plan must be the most balanced one.
    let res = [
        (30.0, 2.0),
        (10.0, 9.0),
        (25.0, 1.0),
        (5.0, 5.0),
        (40.0, 3.0),
        (15.0, 8.0),
        (20.0, 2.0),
        (12.0, 6.0),
    ];
    let bits = [800, 300, 900, 100, 700, 200, 600, 50];
    let cycles: Vec<f64> = (0..res.len()).map(|i| 1000.0 + i as f64).collect();
    let est = chain_estimates(&res, &bits);
    let mut devs = small_devices(3, 100.0, 20.0);
    let clocks = [200.0, 300.0, 250.0];
    for (d, clk) in devs.iter_mut().zip(clocks) {
        d.clk_mhz = clk;
    }
    let mut best = (f64::INFINITY, f64::INFINITY);
    for s in splits(res.len(), 3) {
        let mut use_ = [[0.0f64; 2]; 3];
        for (i, &d) in s.iter().enumerate() {
            use_[d][0] += res[i].0;
            use_[d][1] += res[i].1;
        }
        if use_.iter().any(|u| u[0] > 100.0 || u[1] > 20.0) {
            continue;
        }
        let tau = s
            .iter()
            .enumerate()
            .map(|(i, &d)| cycles[i] / clocks[d])
            .fold(0.0, f64::max);
        let bal = use_
            .iter()
            .map(|u| (u[0] / 100.0).max(u[1] / 20.0))
            .fold(0.0, f64::max);
        let better = tau < best.0 * (1.0 - 1e-9) || (tau <= best.0 * (1.0 + 1e-9) && bal < best.1);
        if better {
            best = (tau, bal);
        }
    }
    let plan = partition(&est, &devs, &Topology::Chain, &opts(Objective::Throughput)).unwrap();
    let got_tau = 1e6 / plan.fps;
    let got_bal = plan
        .devices
        .iter()
        .map(|d| (d.resources.lut / 100.0).max(d.resources.dsp / 20.0))
        .fold(0.0, f64::max);
    assert!(
        (got_tau - best.0).abs() < 1e-6 * best.0,
        "period {got_tau} µs vs exhaustive {}",
        best.0
    );
    assert!(
        (got_bal - best.1).abs() < 1e-6,
        "max utilisation {got_bal} vs exhaustive {} at the best period",
        best.1
    );
}

#[test]
fn mobilenet_on_two_u280s_keeps_the_best_fps_and_shares_the_work() {
    // The paper's case: both cards carry a real share. Before the objective was
    // lexicographic, 84 of 87 layers landed on card 0 at the same FPS.
    let est = mobilenet();
    let plan = partition(
        &est,
        &u280s(2, 0.8),
        &Topology::Chain,
        &opts(Objective::Throughput),
    )
    .unwrap();
    assert_chain_contiguous(&est, &plan);
    // One U280 already reaches the one-pixel-per-cycle limit of the first window
    // generator (250 MHz / (224 * 224 + padding) cycles): FPS must not drop for balance.
    let one = partition(
        &est,
        &u280s(1, 0.8),
        &Topology::Chain,
        &opts(Objective::Throughput),
    )
    .unwrap();
    assert!(
        plan.fps >= one.fps * (1.0 - 1e-9),
        "{} vs {}",
        plan.fps,
        one.fps
    );
    let bram: Vec<f64> = plan
        .devices
        .iter()
        .map(|d| d.utilization["BRAM_18K"])
        .collect();
    let ratio = bram[0].max(bram[1]) / bram[0].min(bram[1]);
    assert!(ratio < 1.5, "BRAM per card {bram:?}");
}

/// FINN's VVAU reads its input in another order when the ConvolutionInputGenerator
/// feeding it is in another model, so no plan may cut between the two: on a chain whose
/// cheapest unconstrained cuts are exactly there, both solvers must find the optimum of
/// an exhaustive search over the splits that keep every such pair together.
#[test]
fn no_plan_cuts_between_a_window_generator_and_its_vvau() {
    let ops = [
        "MVAU_hls",
        "ConvolutionInputGenerator_rtl",
        "VVAU_hls",
        "Thresholding_rtl",
        "ConvolutionInputGenerator_hls",
        "VVAU_rtl",
        "MVAU_hls",
    ];
    let res = [
        (30.0, 2.0),
        (35.0, 1.0),
        (30.0, 9.0),
        (20.0, 2.0),
        (30.0, 1.0),
        (35.0, 8.0),
        (25.0, 3.0),
    ];
    // The window streams (SWG -> VVAU) are the narrowest edges of the chain.
    let bits = [800, 10, 900, 700, 20, 600, 50];
    let mut est = chain_estimates(&res, &bits);
    for (l, op) in est.layers.iter_mut().zip(ops) {
        l.op_type = op.to_string();
    }
    let forbidden: Vec<usize> = (1..ops.len())
        .filter(|&i| {
            ops[i - 1].starts_with("ConvolutionInputGenerator") && ops[i].starts_with("VVAU")
        })
        .collect();
    let devs = small_devices(3, 100.0, 20.0);
    let (mut best_cut, mut best_free_cut) = (u64::MAX, u64::MAX);
    for s in splits(res.len(), 3) {
        let mut use_ = [[0.0f64; 2]; 3];
        for (i, &d) in s.iter().enumerate() {
            use_[d][0] += res[i].0;
            use_[d][1] += res[i].1;
        }
        if use_.iter().any(|u| u[0] > 100.0 || u[1] > 20.0) {
            continue;
        }
        let cuts: Vec<usize> = (1..s.len()).filter(|&i| s[i] != s[i - 1]).collect();
        let cut: u64 = cuts.iter().map(|&i| bits[i - 1]).sum();
        best_free_cut = best_free_cut.min(cut);
        if cuts.iter().all(|i| !forbidden.contains(i)) {
            best_cut = best_cut.min(cut);
        }
    }
    assert!(
        best_free_cut < best_cut,
        "the fixture must tempt a forbidden cut"
    );
    for solve in [partition, finn_partitioner::partition_with_mip] {
        for obj in [Objective::MinCut, Objective::Balanced] {
            let plan = solve(&est, &devs, &Topology::Chain, &opts(obj)).unwrap();
            for c in &plan.cuts {
                let to: usize = c.to_layer[1..].parse().unwrap();
                assert!(
                    !forbidden.contains(&to),
                    "{} {obj:?} cuts {} -> {}",
                    plan.solver.method,
                    c.from_layer,
                    c.to_layer
                );
            }
            if obj == Objective::MinCut {
                let got: u64 = plan.cuts.iter().map(|c| c.bits_per_frame).sum();
                assert_eq!(got, best_cut, "{}", plan.solver.method);
            }
        }
    }
}

/// The same rule on MobileNet-V1 for every objective and 2..4 cards.
#[test]
fn mobilenet_plans_keep_every_window_generator_with_its_vvau() {
    let est = mobilenet();
    let op: std::collections::HashMap<&str, &str> = est
        .layers
        .iter()
        .map(|l| (l.name.as_str(), l.op_type.as_str()))
        .collect();
    for n in [2, 3, 4] {
        for obj in [Objective::Balanced, Objective::MinCut] {
            let plan = partition(&est, &u280s(n, 0.3), &Topology::Chain, &opts(obj)).unwrap();
            assert!(!plan.cuts.is_empty(), "{n} cards {obj:?}: no cut");
            for c in &plan.cuts {
                assert!(
                    !(op[c.from_layer.as_str()].starts_with("ConvolutionInputGenerator")
                        && op[c.to_layer.as_str()].starts_with("VVAU")),
                    "{n} cards {obj:?}: cut {} -> {}",
                    c.from_layer,
                    c.to_layer
                );
            }
        }
    }
}

/// The plan is a build output that is cached and compared: the same inputs must give
/// the same bytes, so the solver's wall-clock time is not in it.
#[test]
fn two_solves_give_byte_identical_plan_json() {
    let est = mobilenet();
    let solve = || {
        let plan = finn_partitioner::partition_with_mip(
            &est,
            &u280s(3, 0.3),
            &Topology::Chain,
            &opts(Objective::Balanced),
        )
        .unwrap();
        assert_eq!(plan.solver.method, "mip");
        serde_json::to_string_pretty(&plan).unwrap()
    };
    let (a, b) = (solve(), solve());
    assert_eq!(a, b);
    let v: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert!(v["solver"].get("seconds").is_none(), "{}", v["solver"]);
}
