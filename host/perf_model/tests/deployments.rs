//! The two implementations on the deployments the graph builds: the tiny network and
//! MobileNet-V1 over two U280s (`//deploy:tiny_2fpga`, `//deploy:mobilenet_2fpga`). The
//! BUCK target passes each deployment's plan, executor graphs and topology in the env.

use crate::common::path;
use perf_model::{analyse, simulate, Deployment};

/// The AuroraFlow paper (HEART '25), MobileNet-V1 on two U280s, measured on hardware.
const PAPER_LATENCY_MS: f64 = 0.89;

/// How close the simulation's first frame must come to the analytical latency. The model
/// has no FIFO bounds: a stage never waits for room downstream and, once it waited for
/// input, is assumed to stream at its own rate again. In the simulation a layer behind a
/// full 2-row FIFO stalls, and the rows it then delivers late shift every fill after it by
/// a fraction of a row time (0.1 % on MobileNet-V1, 1.6 % on the tiny network, whose rows
/// are few and long against its frame). A wrong fill (the classifier's 7 × 7 pooling window
/// taken as one row high) moves the latency by 18 % (`a_wrong_window_moves_the_latency_beyond_the_tolerance`).
/// A link's 0.16 µs is below the tolerance: `the_link_model_is_the_simulators` checks it.
const LATENCY_TOLERANCE: f64 = 0.02;
/// Steady-state FPS over 24 simulated frames against the slowest stage's rate: only the
/// discrete row times blur it.
const FPS_TOLERANCE: f64 = 0.002;

fn load(name: &str) -> Deployment {
    let up = name.to_uppercase();
    perf_model::load(
        &path(&format!("PERF_{up}_PLAN")),
        &path(&format!("PERF_{up}_EXEC")),
        &path(&format!("PERF_{up}_TOPOLOGY")),
    )
    .unwrap_or_else(|e| panic!("{name}: {e:#}"))
}

fn check(name: &str) -> (f64, f64) {
    let dep = load(name);
    let a = analyse(&dep.pipeline);
    let d = simulate(&dep.pipeline, &dep.des_config(24));
    let sim0 = d.latencies_s[0];
    let finn = dep.plan.finn_latency_ms * 1e-3;
    println!(
        "{name}: modelled {:.2} FPS, latency {:.4} ms (first output {:.4} ms); simulated {:.2} FPS, \
         frame 0 {:.4} ms, frames 1.. {:.4}..{:.4} ms; FINN's no-overlap sum {:.4} ms; paper {PAPER_LATENCY_MS} ms",
        a.fps,
        a.latency_s * 1e3,
        a.first_output_s * 1e3,
        d.fps,
        sim0 * 1e3,
        d.latencies_s[1..].iter().cloned().fold(f64::INFINITY, f64::min) * 1e3,
        d.latencies_s[1..].iter().cloned().fold(0.0, f64::max) * 1e3,
        finn * 1e3
    );
    // the partitioner's planned FPS, computed by the partitioner from its own cycles
    assert!(
        (a.fps - dep.plan.fps).abs() <= 1e-9 * dep.plan.fps,
        "{name}: modelled {} FPS, planned {} (bottleneck {} vs {})",
        a.fps,
        dep.plan.fps,
        a.bottleneck,
        dep.plan.bottleneck
    );
    // the same bottleneck, or one as slow (a tie: resnet_tiny's layers mostly take 4096
    // cycles, the partitioner names the first, the model the last)
    let cycles = |n: &str| {
        dep.plan
            .layers
            .iter()
            .find(|l| l.name == n)
            .map(|l| l.cycles)
    };
    assert!(
        a.bottleneck == dep.plan.bottleneck
            || cycles(&a.bottleneck).is_some()
                && cycles(&a.bottleneck) == cycles(&dep.plan.bottleneck),
        "{name}: bottleneck {} vs planned {}",
        a.bottleneck,
        dep.plan.bottleneck
    );
    assert!(
        (d.fps - dep.plan.fps).abs() <= FPS_TOLERANCE * dep.plan.fps,
        "{name}: simulated {} FPS, planned {}",
        d.fps,
        dep.plan.fps
    );
    assert!(
        (sim0 - a.latency_s).abs() <= LATENCY_TOLERANCE * a.latency_s,
        "{name}: simulated frame-0 latency {sim0:e} s vs modelled {:e} s (tolerance {LATENCY_TOLERANCE})",
        a.latency_s
    );
    // a pipeline overlaps its layers: far below the no-overlap sum, above one frame period
    assert!(
        a.latency_s < finn / 3.0,
        "{name}: pipelined {} s vs FINN's sum {finn} s",
        a.latency_s
    );
    assert!(
        a.latency_s > 1.0 / a.fps,
        "{name}: latency below one frame period"
    );
    // and the link's latency is in it once per cut
    assert_eq!(dep.links.len(), dep.plan.cuts.len());
    (a.latency_s, finn)
}

#[test]
fn tiny_model_and_simulation_agree() {
    check("tiny");
}

#[test]
fn mobilenet_model_and_simulation_agree_and_compare_with_the_paper() {
    let (lat, finn) = check("mobilenet");
    let paper = PAPER_LATENCY_MS * 1e-3;
    println!(
        "mobilenet: modelled {:.3} ms vs paper-measured {PAPER_LATENCY_MS} ms (ratio {:.2}); FINN's sum {:.3} ms (ratio {:.2})",
        lat * 1e3,
        lat / paper,
        finn * 1e3,
        finn / paper
    );
    // same order of magnitude as the measurement (the folding differs from the paper's)
    assert!(
        lat > paper / 10.0 && lat < paper * 10.0,
        "modelled {lat} s vs paper {paper} s"
    );
}

/// The residual network over three cards (`//deploy:resnet_tiny_3fpga`): modelled along its
/// longest path, which leaves out exactly the projection shortcut's layers (gen_model.py
/// `resnet_tiny`: the second block is the one with a 1x1 conv shortcut, the identity
/// shortcuts have no layers), a window generator, an MVAU and a Thresholding.
#[test]
fn resnet_tiny_is_modelled_along_its_longest_path() {
    check("resnet_tiny");
    let dep = load("resnet_tiny");
    let op = |name: &str| dep.geometry.layers[name].op_type.clone();
    let mut off: Vec<String> = dep.off_path.iter().map(|n| op(n)).collect();
    off.sort();
    assert_eq!(
        off,
        ["ConvolutionInputGenerator", "MVAU", "Thresholding"],
        "off the path: {:?}",
        dep.off_path
    );
    // every cut is on the path: the links carry the one stream between two blocks
    let on: Vec<&str> = dep
        .pipeline
        .stages
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    for c in &dep.plan.cuts {
        assert!(on.contains(&c.from_layer.as_str()) && on.contains(&c.to_layer.as_str()));
    }
    assert_eq!(dep.links.len(), 2);
}

#[test]
fn the_link_model_is_the_simulators() {
    let dep = load("mobilenet");
    let l = &dep.links[0];
    assert_eq!(l.name, "fpga0:1->fpga1:0");
    // PG074's 55 user cycles plus 5 ns/m of fibre at 402.83 MHz
    let fibre = (l.cable_m * 5.0 * 402.832_031_25 / 1000.0).round() as u64;
    assert_eq!(l.model.latency_cycles, 55 + fibre);
    // 32 B per user cycle, less 1 cycle in 33 and 8 in 10 000
    let want = 32.0 * 8.0 * 402.832_031_25e6 * (1.0 - 1.0 / 33.0) * (1.0 - 8.0 / 10_000.0);
    assert!(
        (l.model.bits_per_s - want).abs() < 1e-3 * want,
        "{} vs {want}",
        l.model.bits_per_s
    );
}

#[test]
fn mismatched_files_are_refused_naming_them() {
    let dir = tempfile::tempdir().unwrap();
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path("PERF_TINY_PLAN")).unwrap()).unwrap();
    // the tiny plan with MobileNet's graphs: a layer no graph has
    let e = format!(
        "{:#}",
        perf_model::load(
            &path("PERF_TINY_PLAN"),
            &path("PERF_MOBILENET_EXEC"),
            &path("PERF_TINY_TOPOLOGY")
        )
        .unwrap_err()
    );
    assert!(
        e.contains("tiny_2fpga__partition") && e.contains("executor graph"),
        "{e}"
    );
    // a topology without the cable the cut needs
    let mut topo: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path("PERF_TINY_TOPOLOGY")).unwrap())
            .unwrap();
    topo["links"] = serde_json::json!([]);
    let t = dir.path().join("topology.json");
    std::fs::write(&t, topo.to_string()).unwrap();
    let e = format!(
        "{:#}",
        perf_model::load(&path("PERF_TINY_PLAN"), &path("PERF_TINY_EXEC"), &t).unwrap_err()
    );
    assert!(
        e.contains("topology.json: no cable between fpga0 and fpga1"),
        "{e}"
    );
    // a plan that is not one
    let p = dir.path().join("plan.json");
    std::fs::write(&p, serde_json::json!({"fps": plan["fps"]}).to_string()).unwrap();
    let e = format!(
        "{:#}",
        perf_model::load(&p, &path("PERF_TINY_EXEC"), &path("PERF_TINY_TOPOLOGY")).unwrap_err()
    );
    assert!(e.contains("plan.json: not a valid partition plan"), "{e}");
}

#[test]
fn a_wrong_window_moves_the_latency_beyond_the_tolerance() {
    let dep = load("mobilenet");
    let right = analyse(&dep.pipeline).latency_s;
    let mut p = dep.pipeline.clone();
    let pool = p
        .stages
        .iter_mut()
        .find(|s| s.name == "ConvolutionInputGenerator_rtl_14")
        .expect("the global pooling window");
    assert_eq!(
        pool.need,
        vec![7],
        "a 7 x 7 window over 7 rows needs all of them"
    );
    pool.need = vec![1];
    let wrong = analyse(&p).latency_s;
    let moved = (right - wrong) / right;
    println!(
        "pooling window one row high: {:.4} ms instead of {:.4} ms ({:.1} %)",
        wrong * 1e3,
        right * 1e3,
        moved * 100.0
    );
    assert!(moved > 5.0 * LATENCY_TOLERANCE, "moved {moved}");
}
