//! The HTML page.

use std::fmt::Write as _;

use perf_model::Deployment;

use crate::run::{RunRecord, RunWhole};
use crate::svg::{esc, grouped, histogram, step_chart, util_bars, Series};
use crate::{max, min, Budgets, Figures};

const RESOURCES: [&str; 5] = ["LUT", "FF", "BRAM_18K", "URAM", "DSP"];

struct Row {
    quantity: &'static str,
    what: String,
    value: String,
    source: &'static str,
    note: String,
}

fn figures_table(fig: &Figures, run: &RunRecord) -> Vec<Row> {
    let mut rows = Vec::new();
    // a replica deployment's rows of one copy, beside the whole's
    let one = if fig.whole.is_some() {
        ", one copy"
    } else {
        ""
    };
    for (name, lat, gbps) in &fig.links {
        rows.push(Row {
            quantity: "link-latency",
            what: format!("link latency, {name}"),
            value: format!("{} µs", grouped(lat * 1e6, 3)),
            source: "modelled",
            note:
                "one way: Aurora core (PG074, 55 user cycles) + fibre, the simulator's link model"
                    .into(),
        });
        rows.push(Row {
            quantity: "link-throughput",
            what: format!("link throughput, {name}"),
            value: format!("{} Gbit/s", grouped(*gbps, 2)),
            source: "modelled",
            note:
                "payload rate of the simulator's link model (64b/66b gearbox, clock compensation)"
                    .into(),
        });
    }
    rows.push(Row {
        quantity: "link-latency",
        what: "link latency".into(),
        value: format!("{} µs", grouped(paper::figures().link.latency_us, 2)),
        source: "paper-measured",
        note: "minimum average, HLS send/recv benchmark through an optical switch".into(),
    });
    rows.push(Row {
        quantity: "link-throughput",
        what: "link throughput".into(),
        value: format!("{} Gbit/s", grouped(paper::figures().link.gbps, 2)),
        source: "paper-measured",
        note: "average at 1 MiB messages".into(),
    });
    rows.push(Row {
        quantity: "fps",
        what: format!("throughput{one}"),
        value: format!("{} FPS", grouped(fig.modelled_fps, 2)),
        source: "modelled",
        note: format!(
            "clock / cycles of the slowest layer ({})",
            esc(&fig.bottleneck)
        ),
    });
    rows.push(Row {
        quantity: "fps",
        what: format!("throughput{one}"),
        value: format!("{} FPS", grouped(fig.simulated_fps, 2)),
        source: "simulated",
        note: format!(
            "steady state of {} frames back to back",
            fig.simulated_latencies_s.len()
        ),
    });
    rows.push(Row {
        quantity: "fps",
        what: "throughput, MobileNet-V1 on 2 × U280".into(),
        value: format!("{} FPS", grouped(paper::figures().mobilenet_2fpga.fps, 2)),
        source: "paper-measured",
        note: format!(
            "trained weights, the paper's folding, {}/{} MHz",
            paper::figures().mobilenet_2fpga.clk_mhz[0],
            paper::figures().mobilenet_2fpga.clk_mhz[1]
        ),
    });
    if let Some(w) = &fig.whole {
        rows.extend(whole_rows(w));
    }
    rows.push(Row {
        quantity: "latency",
        what: format!("latency{one}"),
        value: format!("{} ms", grouped(fig.modelled_latency_s * 1e3, 4)),
        source: "modelled",
        note: "pipelined: every layer's and link's fill + one frame through the bottleneck".into(),
    });
    rows.push(Row {
        quantity: "latency",
        what: format!("latency{one}"),
        value: format!("{} ms", grouped(fig.simulated_latency_s * 1e3, 4)),
        source: "simulated",
        note: format!(
            "first frame; {}–{} ms over all frames (histogram)",
            grouped(min(&fig.simulated_latencies_s) * 1e3, 4),
            grouped(max(&fig.simulated_latencies_s) * 1e3, 4)
        ),
    });
    rows.push(Row {
        quantity: "latency",
        what: "latency, MobileNet-V1 on 2 × U280".into(),
        value: format!(
            "{} ms",
            grouped(paper::figures().mobilenet_2fpga.latency_ms, 2)
        ),
        source: "paper-measured",
        note: "the paper's folding differs from this plan's".into(),
    });
    rows.push(Row {
        quantity: "latency",
        what: "latency, no overlap".into(),
        value: format!("{} ms", grouped(fig.finn_latency_s * 1e3, 4)),
        source: "FINN's estimate",
        note: "FINN's critical-path model: the sum of every layer's full cycles, no pipelining"
            .into(),
    });
    let exact = run.frames.iter().filter(|f| f.bit_exact).count();
    let top1 = run
        .frames
        .iter()
        .filter(|f| f.top1 == f.reference_top1)
        .count();
    rows.push(Row {
        quantity: "agreement",
        what: "agreement with the unpartitioned reference".into(),
        value: format!(
            "{top1}/{} top-1, {exact}/{} bit-exact",
            run.frames.len(),
            run.frames.len()
        ),
        source: "run",
        note: format!(
            "{} images in {:.2} s wall time (functional simulation, not hardware speed)",
            run.images, run.wall_s
        ),
    });
    rows.extend(accuracy_rows(run));
    rows
}

/// A replica deployment: every copy together, beside Elastic-DF's copies of MobileNet-V1
/// (the rows above are one copy's).
fn whole_rows(w: &RunWhole) -> Vec<Row> {
    let fps = |v: f64| format!("{} FPS", grouped(v, 2));
    let mut rows = vec![
        Row {
            quantity: "fps-whole",
            what: format!("throughput, all {} copies", w.copies),
            value: fps(w.modelled_fps),
            source: "modelled",
            note: format!("round robin: every copy at the rate of the slowest bound, here {}", esc(&w.limit)),
        },
        Row {
            quantity: "fps-whole",
            what: format!("throughput, all {} copies", w.copies),
            value: fps(w.simulated_fps),
            source: "simulated",
            note: format!(
                "{} rounds of one image per copy, results in input order; {} per card ({} GB/s each way) shared by its copies",
                w.rounds,
                esc(&w.host_link),
                grouped(w.host_link_gbytes_per_s, 2)
            ),
        },
    ];
    let e = &paper::figures().elastic_df;
    for (what, v) in [
        ("1 CU", e.fps_1cu),
        ("2 CUs on one card", e.fps_2cu_1card),
        ("3 CUs on two cards", e.fps_3cu_2cards),
    ] {
        rows.push(Row {
            quantity: "fps-whole",
            what: format!("throughput, MobileNet-V1, Elastic-DF {what}"),
            value: fps(v),
            source: "Elastic-DF-measured",
            note: "U280s; copies of the pipeline (compute units)".into(),
        });
    }
    rows
}

/// With `infer --labels`: each model's accuracy against the labels; always: whether the
/// weights are trained (so a random network's classes are not read as predictions).
fn accuracy_rows(run: &RunRecord) -> Vec<Row> {
    let mut rows = Vec::new();
    if let Some(a) = &run.accuracy {
        let pct = |k: u64| 100.0 * k as f64 / a.images.max(1) as f64;
        for (who, h) in [
            ("multi-card pipeline", &a.pipeline),
            ("unpartitioned model", &a.unpartitioned),
        ] {
            rows.push(Row {
                quantity: "accuracy",
                what: format!("accuracy against the labels, {who}"),
                value: format!(
                    "{:.2} % top-1, {:.2} % top-5 ({}/{n}, {}/{n})",
                    pct(h.top1),
                    pct(h.top5),
                    h.top1,
                    h.top5,
                    n = a.images
                ),
                source: "run",
                note: format!("labels: {}", a.labels),
            });
        }
    }
    rows.push(Row {
        quantity: "weights",
        what: "weights".into(),
        value: if run.training.is_some() {
            "trained"
        } else {
            "untrained"
        }
        .into(),
        source: "run",
        note: run.training.clone().unwrap_or_else(|| {
            "seeded random (the model records no training): its classes mean nothing".into()
        }),
    });
    rows
}

pub fn render(
    run: &RunRecord,
    dep: &Deployment,
    budgets: Option<&Budgets>,
    fig: &Figures,
) -> String {
    let mut h = String::new();
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"/><title>Run of {n}</title>\
         <style>body{{font-family:sans-serif;margin:1.5em;max-width:1100px}}table{{border-collapse:collapse}}\
         td,th{{border:1px solid #999;padding:2px 8px}}td.v{{text-align:right;white-space:nowrap}}\
         tr[data-source=\"paper-measured\"],tr[data-source=\"Elastic-DF-measured\"]{{background:#fdf3e1}}tr[data-source=\"simulated\"]{{background:#eef6ee}}\
         tr[data-source=\"modelled\"]{{background:#eef3fb}}.device-util,.link-chart{{margin:0.5em 0 1em}}</style></head><body>\n\
         <h1>Run of {n}: <code>infer</code>, {img} images</h1>\n",
        n = esc(&run.deployment),
        img = run.images
    );
    // figures first: what people look for
    h.push_str("<h2>Figures beside the paper's</h2>\n<table class=\"figures\"><tr><th>quantity</th><th>value</th><th>source</th><th>how</th></tr>\n");
    for r in figures_table(fig, run) {
        let _ = writeln!(
            h,
            "<tr class=\"figure\" data-quantity=\"{}\" data-source=\"{}\"><td>{}</td><td class=\"v\">{}</td><td class=\"source\">{}</td><td>{}</td></tr>",
            r.quantity,
            esc(r.source),
            esc(&r.what),
            r.value,
            esc(r.source),
            r.note
        );
    }
    let _ = writeln!(
        h,
        "</table>\n<p>paper-measured: {}.</p>",
        esc(&paper::figures().citation)
    );
    if fig.whole.is_some() {
        let _ = writeln!(
            h,
            "<p>Elastic-DF-measured: {}.</p>",
            esc(&paper::figures().elastic_df.citation)
        );
    }

    h.push_str(
        "<h2>Utilisation per device (plan, with the link kernels) against the budget</h2>\n",
    );
    for d in &dep.plan.devices {
        let clock = run
            .devices
            .iter()
            .find(|r| r.name == d.name)
            .map(|r| r.clock_mhz);
        let rows: Vec<(String, f64, Option<f64>)> = RESOURCES
            .iter()
            .map(|r| {
                let budget = budgets
                    .and_then(|b| b.get(&d.name))
                    .and_then(|m| m.get(*r))
                    .copied();
                (
                    r.to_string(),
                    d.utilization.get(*r).copied().unwrap_or(0.0),
                    budget,
                )
            })
            .collect();
        let _ = writeln!(
            h,
            "<div class=\"device-util\" data-device=\"{n}\"><h3>{n} · {c}</h3>{svg}</div>",
            n = esc(&d.name),
            c = match clock {
                Some(c) => format!("{c:.0} MHz (run), {:.0} MHz (plan)", d.clk_mhz),
                None => format!("{:.0} MHz (plan)", d.clk_mhz),
            },
            svg = util_bars(&rows)
        );
    }

    h.push_str("<h2>Links: traffic and flow control over the run</h2>\n");
    for l in &run.links {
        let pts = |f: fn(&crate::run::LinkSample) -> u64| {
            l.samples.iter().map(|s| (s.t_s, f(s) as f64)).collect()
        };
        let traffic = step_chart(
            "link-traffic",
            &format!("{}: beats sent and received", l.name),
            "s",
            "beats",
            &[
                Series {
                    name: "TX beats",
                    color: "#36c",
                    dash: "",
                    points: pts(|s| s.tx_beats),
                },
                Series {
                    name: "RX beats",
                    color: "#3a3",
                    dash: "5 3",
                    points: pts(|s| s.rx_beats),
                },
            ],
        );
        let flow = step_chart(
            "link-flow",
            &format!("{}: flow-control events (cumulative)", l.name),
            "s",
            "events",
            &[
                Series {
                    name: "XOFF",
                    color: "#c33",
                    dash: "",
                    points: pts(|s| s.xoff),
                },
                Series {
                    name: "XON",
                    color: "#e90",
                    dash: "5 3",
                    points: pts(|s| s.xon),
                },
            ],
        );
        let f = &l.final_counters;
        let _ = writeln!(
            h,
            "<div class=\"link-chart\" data-link=\"{n}\">{traffic}{flow}<p>final: TX {} beats, RX {} beats, XOFF {}, XON {}, \
             max in flight {}, overflow <b>{}</b>{}</p></div>",
            f.tx_beats,
            f.rx_beats,
            f.xoff,
            f.xon,
            f.max_in_flight,
            f.overflow,
            if f.overflow == 0 { " (no loss)" } else { " — words were lost" },
            n = esc(&l.name)
        );
    }

    let ms: Vec<f64> = fig.simulated_latencies_s.iter().map(|s| s * 1e3).collect();
    let _ = writeln!(
        h,
        "<h2>Latency per frame (simulated)</h2>\n<div class=\"latency\">{}</div>\n<p>{} frames back to back through a \
         discrete-event simulation of the pipeline (row by row, 2-row FIFOs between layers, the links' latency and \
         bandwidth); the first frame enters an empty pipeline, later ones queue behind the bottleneck.</p>",
        histogram("latency-histogram", "frames per latency bin", "ms", &ms, 20),
        ms.len()
    );
    h.push_str("</body></html>\n");
    h
}
