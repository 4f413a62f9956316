//! Pipelines small enough to work out on paper: the reference is the arithmetic in the
//! comments, not either implementation.

use perf_model::{analyse, simulate, DesConfig, Pipeline, StageKind};

use crate::common::{stage, three_stages, US};

fn close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 1e-9 * want.abs().max(1e-6),
        "{what}: got {got:e}, worked out {want:e}"
    );
}

#[test]
fn three_stage_pipeline_as_worked_out() {
    let p = Pipeline::new(three_stages()).unwrap();
    let a = analyse(&p);
    close(a.latency_s, 10.0 * US, "analytic latency");
    close(a.first_output_s, 8.0 * US, "analytic first output");
    close(a.fps, 1.0 / (8.0 * US), "analytic FPS");
    assert_eq!(a.bottleneck, "A");
    let d = simulate(
        &p,
        &DesConfig {
            frames: 16,
            ..DesConfig::default()
        },
    );
    close(d.latencies_s[0], 10.0 * US, "simulated latency of frame 0");
    close(d.fps, 1.0 / (8.0 * US), "simulated FPS");
}

/// The same with a link between A and B: 1 µs a row on the wire, 5 µs latency. A's rows
/// (3, 5, 7, 9) are sent at once, done at 4, 6, 8, 10 and arrive at 9, 11, 13, 15. B's row 1
/// needs row 3 (13) -> 14; row 2 needs row 4 (15) -> 16.  Latency 16 µs.
#[test]
fn a_link_adds_its_latency_and_one_row_on_the_wire() {
    let mut s = three_stages();
    s.insert(
        2,
        stage("link", StageKind::Link, (4, 4), 4.0, vec![1, 2, 3, 4], 5.0),
    );
    let p = Pipeline::new(s).unwrap();
    let a = analyse(&p);
    close(a.latency_s, 16.0 * US, "analytic latency");
    // an RX FIFO that holds the rows in flight, as the kernel is sized for its cable
    let d = simulate(
        &p,
        &DesConfig {
            frames: 8,
            link_fifo_rows: 8,
            ..DesConfig::default()
        },
    );
    close(d.latencies_s[0], 16.0 * US, "simulated latency of frame 0");
}

/// A slow consumer behind one-row FIFOs stalls its producers without losing throughput:
/// src 2 rows / 1 µs, A 2 rows / 1 µs, B 2 rows / 10 µs -> one frame every 10 µs.
/// Frame 0: src rows at 0.5, 1; A at 1, 1.5; B at 6, 11 -> 11 µs.
#[test]
fn backpressure_keeps_the_bottleneck_rate() {
    let s = vec![
        stage("src", StageKind::Source, (2, 2), 1.0, vec![1, 2], 0.0),
        stage("A", StageKind::Layer, (2, 2), 1.0, vec![1, 2], 0.0),
        stage("B", StageKind::Layer, (2, 2), 10.0, vec![1, 2], 0.0),
    ];
    let p = Pipeline::new(s).unwrap();
    let cfg = DesConfig {
        frames: 20,
        fifo_rows: 1,
        link_fifo_rows: 1,
    };
    let d = simulate(&p, &cfg);
    close(d.latencies_s[0], 11.0 * US, "simulated latency of frame 0");
    close(analyse(&p).latency_s, 11.0 * US, "analytic latency");
    close(d.fps, 1e5, "simulated FPS");
    // Later frames queue behind the bottleneck, but only as far as the buffers let them:
    // each stage holds at most 2 rows (the one in work and one read ahead), each FIFO 1,
    // 8 rows in all, each leaving B 5 µs after the one before: at most 40 µs, and steady.
    let tail = &d.latencies_s[10..];
    assert!(
        tail.iter().all(|&l| l <= 40.0 * US + 1e-12),
        "{:?}",
        d.latencies_s
    );
    assert!(
        tail.iter().all(|&l| (l - tail[0]).abs() < 1e-12),
        "not steady: {tail:?}"
    );
}

#[test]
fn bad_stages_are_refused_naming_the_stage() {
    let mut s = three_stages();
    s[2].need = vec![4, 3];
    let e = Pipeline::new(s).unwrap_err().to_string();
    assert!(e.contains("stage B") && e.contains("non-decreasing"), "{e}");
    let mut s = three_stages();
    s[2].in_rows = 5;
    s[2].need = vec![3, 5];
    let e = Pipeline::new(s).unwrap_err().to_string();
    assert!(
        e.contains("stage B reads 5 rows") && e.contains("A before it writes 4"),
        "{e}"
    );
}
