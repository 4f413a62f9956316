//! Several copies of a pipeline worked out on paper (hand.rs's three stages: one frame per
//! 8 µs, a frame through the empty pipeline in 10 µs), sharing each card's PCIe link. The
//! references are closed forms computed here: N copies with an ample link deliver N times
//! one copy's simulated rate; a tight link caps the whole at bandwidth / frame bytes per card;
//! a copy cut across cards runs at its own slowest stage (its link included), is fed on its
//! first card and drained on its last.

use perf_model::{
    analyse_whole, simulate, simulate_whole, CopyPipeline, DesConfig, HostLink, Pipeline,
    StageKind, Whole,
};

use crate::common;

use common::{three_stages, US};

/// The in-order rate over whole rounds: only the rows' discrete times blur it.
const FPS_TOLERANCE: f64 = 0.005;

/// `cards[k]` copies on card k (their input and output DMAs there).
fn whole(cards: &[usize], in_bytes: f64, out_bytes: f64, in_bw: f64, out_bw: f64) -> Whole {
    let mut copies = Vec::new();
    for (d, &n) in cards.iter().enumerate() {
        for _ in 0..n {
            copies.push(CopyPipeline {
                index: copies.len(),
                pipeline: Pipeline::new(three_stages()).unwrap(),
                des: DesConfig::default(),
                in_device: format!("fpga{d}"),
                out_device: format!("fpga{d}"),
            });
        }
    }
    Whole {
        copies,
        frame_in_bytes: in_bytes,
        frame_out_bytes: out_bytes,
        host: HostLink {
            name: "test link".into(),
            in_bytes_per_s: in_bw,
            out_bytes_per_s: out_bw,
        },
        plan_fps_total: None,
    }
}

fn near(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= FPS_TOLERANCE * want,
        "{what}: got {got:.1} FPS, want {want:.1} (tolerance {FPS_TOLERANCE})"
    );
}

#[test]
fn ample_links_give_n_times_one_copy() {
    let one = simulate(
        &Pipeline::new(three_stages()).unwrap(),
        &DesConfig {
            frames: 40,
            ..DesConfig::default()
        },
    )
    .fps;
    for cards in [vec![3], vec![5, 5]] {
        let n: usize = cards.iter().sum();
        let w = whole(&cards, 1000.0, 40.0, 1e15, 1e15);
        let a = analyse_whole(&w);
        assert!(
            (a.fps - n as f64 / (8.0 * US)).abs() < 1e-6 * a.fps,
            "{a:?}"
        );
        assert_eq!(a.limit, "copy 0: A");
        near(
            simulate_whole(&w, 40).fps,
            n as f64 * one,
            &format!("{cards:?}"),
        );
    }
}

#[test]
fn a_tight_link_caps_the_whole_at_bandwidth_over_frame_bytes() {
    // host to card: 1000 B an image at 50 MB/s is 50,000 images a second per card, below
    // 4 copies × 125,000
    let w = whole(&[4], 1000.0, 40.0, 5e7, 1e15);
    let a = analyse_whole(&w);
    assert!((a.fps - 5e7 / 1000.0).abs() < 1e-6 * a.fps, "{a:?}");
    assert_eq!(a.limit, "test link of fpga0, host to card");
    near(
        simulate_whole(&w, 40).fps,
        5e7 / 1000.0,
        "one card, input bound",
    );
    // two cards, each its own link: twice that
    let w = whole(&[2, 2], 1000.0, 40.0, 5e7, 1e15);
    near(
        analyse_whole(&w).fps,
        2.0 * 5e7 / 1000.0,
        "two cards, modelled",
    );
    near(
        simulate_whole(&w, 40).fps,
        2.0 * 5e7 / 1000.0,
        "two cards, input bound",
    );
    // card to host: 2000 B a result at 100 MB/s
    let w = whole(&[4], 1000.0, 2000.0, 1e15, 1e8);
    assert_eq!(analyse_whole(&w).limit, "test link of fpga0, card to host");
    near(
        simulate_whole(&w, 40).fps,
        1e8 / 2000.0,
        "one card, output bound",
    );
}

#[test]
fn the_first_image_crosses_the_link_the_pipeline_and_the_link_back() {
    // 1000 B in at 1 GB/s (1 µs), 10 µs through the pipeline, 500 B back (0.5 µs)
    let w = whole(&[2], 1000.0, 500.0, 1e9, 1e9);
    let r = simulate_whole(&w, 4);
    assert!(
        (r.first_latency_s - 11.5 * US).abs() < 1e-12,
        "{}",
        r.first_latency_s
    );
    assert_eq!(r.back_s.len(), 8);
    assert!(r.back_s.windows(2).all(|p| p[0] <= p[1]), "in input order");
}

/// hand.rs's pipeline with a link between A and B taking `link_us` a frame on the wire (4 rows)
/// and 5 µs latency: a copy cut from `from` to `to`.
fn cut_copy(index: usize, link_us: f64, from: &str, to: &str) -> CopyPipeline {
    let mut s = three_stages();
    s.insert(
        2,
        common::stage(
            "link",
            StageKind::Link,
            (4, 4),
            link_us,
            vec![1, 2, 3, 4],
            5.0,
        ),
    );
    CopyPipeline {
        index,
        pipeline: Pipeline::new(s).unwrap(),
        des: DesConfig {
            link_fifo_rows: 8,
            ..DesConfig::default()
        },
        in_device: from.into(),
        out_device: to.into(),
    }
}

/// One whole copy on each of two cards and a third cut from fpga0 to fpga1 (its input DMA on
/// fpga0, its output DMA on fpga1), as //deploy:tiny_2fpga_replicas places them.
fn two_whole_one_cut(link_us: f64, in_bw: f64, out_bw: f64) -> Whole {
    let mut w = whole(&[1, 1], 1000.0, 1000.0, in_bw, out_bw);
    w.copies.push(cut_copy(2, link_us, "fpga0", "fpga1"));
    w
}

#[test]
fn a_cut_copy_whose_link_is_slowest_sets_every_copys_rate() {
    // the link carries a frame in 16 µs, slower than A's 8 µs: round robin gives every copy
    // one frame per 16 µs, the whole 3 / 16 µs = 187,500 FPS
    let w = two_whole_one_cut(16.0, 1e15, 1e15);
    let a = analyse_whole(&w);
    assert!((a.fps - 3.0 / (16.0 * US)).abs() < 1e-6 * a.fps, "{a:?}");
    assert_eq!(a.limit, "copy 2: link");
    near(
        simulate_whole(&w, 40).fps,
        3.0 / (16.0 * US),
        "link-bound cut copy",
    );
    // a fast link leaves A the bottleneck of every copy: 3 / 8 µs
    let w = two_whole_one_cut(4.0, 1e15, 1e15);
    assert_eq!(analyse_whole(&w).limit, "copy 0: A");
    near(
        simulate_whole(&w, 40).fps,
        3.0 / (8.0 * US),
        "A-bound, one copy cut",
    );
}

#[test]
fn a_cut_copy_is_fed_on_its_first_card_and_drained_on_its_last() {
    // host to card at 50 MB/s, 1000 B an image: fpga0 writes the images of copies 0 and 2
    // (2 per round), fpga1 those of copy 1: r <= 5e7 / (2 × 1000) = 25,000, the whole 75,000
    let w = two_whole_one_cut(4.0, 5e7, 1e15);
    let a = analyse_whole(&w);
    assert!((a.fps - 3.0 * 5e7 / 2000.0).abs() < 1e-6 * a.fps, "{a:?}");
    assert_eq!(a.limit, "test link of fpga0, host to card");
    near(simulate_whole(&w, 40).fps, 75_000.0, "input bound on fpga0");
    // card to host: fpga1 reads the results of copies 1 and 2
    let w = two_whole_one_cut(4.0, 1e15, 5e7);
    let a = analyse_whole(&w);
    assert!((a.fps - 3.0 * 5e7 / 2000.0).abs() < 1e-6 * a.fps, "{a:?}");
    assert_eq!(a.limit, "test link of fpga1, card to host");
    near(
        simulate_whole(&w, 40).fps,
        75_000.0,
        "output bound on fpga1",
    );
}
