//! The per-device lower resource bounds (`min_util`, the `floor` of a resolved device):
//! plans against an exhaustive search over every contiguous split of a small chain that
//! keeps each device between its floor and its cap, and the bounds' own checks.

use finn_partitioner::devices::{self, Device, DeviceSpec};
use finn_partitioner::estimates::Estimates;
use finn_partitioner::plan::Plan;
use finn_partitioner::resources::Res;
use finn_partitioner::topology::Topology;
use finn_partitioner::{partition, Objective, Options};
use serde_json::json;

/// LUT and DSP per layer, and the bits per frame each layer sends to the next.
const RES: [(f64, f64); 8] = [
    (30.0, 2.0),
    (10.0, 9.0),
    (25.0, 1.0),
    (5.0, 5.0),
    (40.0, 3.0),
    (15.0, 8.0),
    (20.0, 2.0),
    (12.0, 6.0),
];
const BITS: [u64; 8] = [800, 300, 900, 100, 700, 200, 600, 50];
/// Each device: 200 LUT, 40 DSP, all of it usable.
const LUT: f64 = 200.0;
const DSP: f64 = 40.0;

fn chain() -> Estimates {
    let layers: Vec<_> = RES
        .iter()
        .enumerate()
        .map(|(i, &(lut, dsp))| {
            json!({
                "name": format!("L{i}"), "op_type": "Other",
                "preds": if i == 0 { vec![] } else { vec![format!("L{}", i - 1)] },
                "out_bits_per_frame": BITS[i], "cycles": 1000 + i as u64,
                "res": {"LUT": lut, "DSP": dsp},
            })
        })
        .collect();
    serde_json::from_value(json!({"clk_ns": 4.0, "layers": layers})).unwrap()
}

fn spec(i: usize, min_lut: f64) -> DeviceSpec {
    let all = |v: f64| Res {
        lut: v,
        ff: v,
        bram18: v,
        uram: v,
        dsp: v,
    };
    DeviceSpec {
        name: format!("d{i}"),
        platform: None,
        kind: None,
        total: Some(Res {
            lut: LUT,
            ff: 1.0,
            bram18: 1.0,
            uram: 1.0,
            dsp: DSP,
        }),
        clk_mhz: 200.0,
        ports: Some(2),
        max_util: Some(all(1.0)),
        min_util: Some(Res {
            lut: min_lut,
            ..Res::default()
        }),
        reserve_link_kernels: Some(false),
    }
}

/// `n` devices, each with at least `min_lut` of its LUTs in use.
fn devices(n: usize, min_lut: f64) -> Vec<Device> {
    devices::resolve_all(&(0..n).map(|i| spec(i, min_lut)).collect::<Vec<_>>()).unwrap()
}

fn opts(objective: Objective) -> Options {
    Options {
        objective,
        ..Options::default()
    }
}

/// Every way to cut the chain into contiguous pieces on devices 0, 1, ... in order (a
/// device may stay empty only at the end).
fn splits(n: usize, d: usize) -> Vec<Vec<usize>> {
    fn rec(n: usize, d: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == n {
            out.push(cur.clone());
            return;
        }
        let last = *cur.last().unwrap();
        for dev in [last, last + 1] {
            if dev < d {
                cur.push(dev);
                rec(n, d, cur, out);
                cur.pop();
            }
        }
    }
    let mut out = Vec::new();
    rec(n, d, &mut vec![0], &mut out);
    out
}

/// The best (balanced, min-cut) values over every split within [floor, cap] on each of `d`
/// devices, computed from RES and BITS alone.
fn exhaustive(d: usize, min_lut: f64) -> Option<(f64, u64)> {
    let mut best: Option<(f64, u64)> = None;
    for s in splits(RES.len(), d) {
        let mut used = vec![(0.0f64, 0.0f64); d];
        for (i, &dev) in s.iter().enumerate() {
            used[dev].0 += RES[i].0;
            used[dev].1 += RES[i].1;
        }
        let fits = used
            .iter()
            .all(|&(l, p)| l <= LUT && p <= DSP && l >= min_lut * LUT - 1e-9);
        if !fits {
            continue;
        }
        let bal = used
            .iter()
            .map(|&(l, p)| (l / LUT).max(p / DSP))
            .fold(0.0, f64::max);
        let cut: u64 = (1..s.len())
            .filter(|&i| s[i] != s[i - 1])
            .map(|i| BITS[i - 1])
            .sum();
        best = Some(match best {
            None => (bal, cut),
            Some((b, c)) => (b.min(bal), c.min(cut)),
        });
    }
    best
}

fn balance(plan: &Plan) -> f64 {
    plan.devices
        .iter()
        .map(|d| (d.resources.lut / LUT).max(d.resources.dsp / DSP))
        .fold(0.0, f64::max)
}

/// Without a floor, min-cut keeps the whole chain (157 LUT) on one device; a floor of 20 to
/// 35 % of each device's LUTs forces cuts, and both objectives must then find the best split
/// whose pieces all hold at least that much (the MIP: the exact chain algorithm has no floors).
#[test]
fn plans_meet_the_lower_bounds_as_an_exhaustive_search_does() {
    let est = chain();
    for (n, min_lut) in [(2, 0.0), (2, 0.3), (3, 0.2), (2, 0.35)] {
        let devs = devices(n, min_lut);
        let (best_bal, best_cut) = exhaustive(n, min_lut).expect("a feasible split");
        let plan = partition(&est, &devs, &Topology::Chain, &opts(Objective::MinCut)).unwrap();
        let cut: u64 = plan.cuts.iter().map(|c| c.bits_per_frame).sum();
        assert_eq!(cut, best_cut, "{n} devices, min_util {min_lut}");
        for d in &plan.devices {
            assert!(
                d.resources.lut >= min_lut * LUT - 1e-9,
                "{} holds {} LUT, below its floor",
                d.name,
                d.resources.lut
            );
        }
        let plan = partition(&est, &devs, &Topology::Chain, &opts(Objective::Balanced)).unwrap();
        assert!(
            (balance(&plan) - best_bal).abs() < 1e-9,
            "{n} devices, min_util {min_lut}: {} vs exhaustive {best_bal}",
            balance(&plan)
        );
    }
    // the floor changes the answer: without it min-cut does not cut at all
    assert_eq!(exhaustive(2, 0.0).unwrap().1, 0);
    assert!(exhaustive(2, 0.3).unwrap().1 > 0);
}

#[test]
fn floors_no_split_meets_are_refused() {
    // 157 LUT cannot give two devices 120 each
    assert!(exhaustive(2, 0.6).is_none());
    let err = partition(
        &chain(),
        &devices(2, 0.6),
        &Topology::Chain,
        &opts(Objective::MinCut),
    )
    .unwrap_err();
    // the floor it names is 60 % of 200 LUT
    let msg = format!("{err:#}");
    assert!(
        msg.contains("infeasible") && msg.contains("LUT") && msg.contains("bound of 120"),
        "{msg}"
    );
}

#[test]
fn a_floor_above_the_cap_is_refused_naming_device_and_resource() {
    let mut s = spec(0, 0.9);
    s.max_util = Some(Res {
        lut: 0.5,
        ..s.max_util.unwrap()
    });
    let err = s.resolve().unwrap_err().to_string();
    assert!(
        err.contains("device d0") && err.contains("LUT") && err.contains("min_util <= max_util"),
        "{err}"
    );
}
