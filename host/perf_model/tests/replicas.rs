//! The whole of `//deploy:mobilenet_2fpga_replicas` (ten whole copies of MobileNet-V1 over
//! two U280s) from that deployment's own plan, executor graphs and topology. References: the
//! partitioner's `fps_total` (its own sum of every copy's FPS) and the 13,000 FPS.

use crate::common::path;
use perf_model::{analyse_whole, simulate_whole};

/// The in-order rate over whole rounds against the copies' bottleneck rate.
const FPS_TOLERANCE: f64 = 0.005;

#[test]
fn mobilenet_replicas_whole_is_the_plans_total() {
    let plan_path = path("PERF_REPLICAS_PLAN");
    let w = perf_model::whole::load(
        &plan_path,
        &path("PERF_REPLICAS_EXEC"),
        &path("PERF_REPLICAS_TOPOLOGY"),
    )
    .unwrap()
    .expect("a replica plan");
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan_path).unwrap()).unwrap();
    let total = plan["fps_total"].as_f64().unwrap();
    assert_eq!(w.plan_fps_total, Some(total));
    let copies = plan["replicas"].as_array().unwrap();
    assert_eq!(w.copies.len(), copies.len());
    // the copies' DMAs are on the cards the plan puts their first and last layers on
    for (c, r) in w.copies.iter().zip(copies) {
        let segs = r["segments"].as_array().unwrap();
        assert_eq!(c.in_device, segs[0]["device"].as_str().unwrap());
        assert_eq!(
            c.out_device,
            segs[segs.len() - 1]["device"].as_str().unwrap()
        );
    }
    assert_eq!(w.host.name, "PCIe Gen3 x16");
    // MobileNet-V1's input: 224 × 224 × 3 bytes
    assert_eq!(w.frame_in_bytes, 224.0 * 224.0 * 3.0);
    let a = analyse_whole(&w);
    // 24 rounds: about 7 frames are in a copy at once; over 8 rounds the second half is
    // still 1 % below the steady rate
    let s = simulate_whole(&w, 24);
    println!(
        "replicas: {} copies, modelled {:.1} FPS ({}), simulated {:.1} FPS, image 0 {:.4} ms; plan {total:.1}",
        w.copies.len(),
        a.fps,
        a.limit,
        s.fps,
        s.first_latency_s * 1e3
    );
    assert!(
        (a.fps - total).abs() <= 1e-9 * total,
        "modelled {} vs plan {total}",
        a.fps
    );
    assert!(
        a.limit.starts_with("copy "),
        "PCIe should not bind: {}",
        a.limit
    );
    assert!(
        (s.fps - total).abs() <= FPS_TOLERANCE * total,
        "simulated {} vs plan {total}",
        s.fps
    );
    // issue #34: at least 13,000 FPS on two U280s
    assert!(s.fps >= 13_000.0 && a.fps >= 13_000.0);
}
