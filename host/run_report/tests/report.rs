//! The page of a run of //deploy:tiny_2fpga (a fixture run.json in the schema `aurora-host
//! infer` writes) with the deployment's real plan, executor graphs, topology and budgets.

use std::path::{Path, PathBuf};

use run_report::svg::grouped;
use run_report::{write_report, ReportPaths, RunRecord};

fn built(var: &str) -> PathBuf {
    let v = std::env::var(var).unwrap_or_else(|_| {
        panic!("{var} is not set: run these tests with `./forge test //host/run_report:tests`, which builds the deployment and sets it")
    });
    let p = PathBuf::from(v);
    if p.is_absolute() {
        p
    } else {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(p)
    }
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn render(run: &Path, out: &Path) -> anyhow::Result<run_report::Figures> {
    let (plan, exec, topo, devices) = (
        built("REPORT_TINY_PLAN"),
        built("REPORT_TINY_EXEC"),
        built("REPORT_TINY_TOPOLOGY"),
        built("REPORT_TINY_DEVICES"),
    );
    write_report(&ReportPaths {
        run,
        plan: &plan,
        exec: &exec,
        topology: &topo,
        devices: Some(&devices),
        out,
    })
}

fn count(hay: &str, needle: &str) -> usize {
    hay.matches(needle).count()
}

#[test]
fn the_page_shows_every_device_link_frame_and_the_papers_figures() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.html");
    let fig = render(&fixture("tiny_run.json"), &out).unwrap();
    let html = std::fs::read_to_string(&out).unwrap();
    let run = RunRecord::read(&fixture("tiny_run.json")).unwrap();
    assert_eq!(count(&html, "class=\"device-util\""), run.devices.len());
    assert_eq!(count(&html, "class=\"link-chart\""), run.links.len());
    // one bar per resource and device
    assert_eq!(count(&html, "class=\"util-bar\""), 5 * run.devices.len());
    // the histogram holds every simulated frame, one per image of the run
    assert_eq!(count(&html, "class=\"latency-histogram\""), 1);
    assert!(html.contains(&format!("data-count=\"{}\"", run.images)));
    let bins: usize = html
        .split("class=\"bin\" data-count=\"")
        .skip(1)
        .map(|s| s.split('"').next().unwrap().parse::<usize>().unwrap())
        .sum();
    assert_eq!(bins as u64, run.images);
    // the paper's four figures, labelled as measured (values as the paper prints them)
    for (q, v) in [
        ("link-latency", "0.51 µs"),
        ("link-throughput", "95.03 Gbit/s"),
        ("fps", "4,460.92 FPS"),
        ("latency", "0.89 ms"),
    ] {
        let row = format!("data-quantity=\"{q}\" data-source=\"paper-measured\"");
        let line = html.lines().find(|l| l.contains(&row) && l.contains(v));
        assert!(line.is_some(), "no paper-measured {q} row with {v}");
    }
    // modelled and simulated rows for FPS and latency, FINN's sum labelled as FINN's
    for q in ["fps", "latency"] {
        for src in ["modelled", "simulated"] {
            assert!(
                html.contains(&format!("data-quantity=\"{q}\" data-source=\"{src}\"")),
                "{q} {src}"
            );
        }
    }
    assert!(html.contains(&format!("{} ms", grouped(fig.finn_latency_s * 1e3, 4))));
    assert!(html.contains("data-source=\"FINN's estimate\""));
    // flow control: one step per sample in the XOFF line
    let xoff = html
        .split("data-series=\"XOFF\" d=\"")
        .nth(1)
        .unwrap()
        .split('"')
        .next()
        .unwrap();
    assert_eq!(count(xoff, " H "), run.links[0].samples.len() - 1);
    // self-contained: nothing fetched
    assert!(
        !html.contains("<script") && !html.contains("src=\"http") && !html.contains("href=\"http")
    );
}

#[test]
fn figures_are_printed_for_infer() {
    let dir = tempfile::tempdir().unwrap();
    let fig = render(&fixture("tiny_run.json"), &dir.path().join("r.html")).unwrap();
    let s = fig.summary();
    assert!(
        s.contains("modelled:") && s.contains("simulated:") && s.contains("FINN's no-overlap"),
        "{s}"
    );
    assert!(s.contains("fpga0:1->fpga1:0"), "{s}");
    assert_eq!(fig.simulated_latencies_s.len(), 16);
}

#[test]
fn a_run_of_another_deployment_or_link_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("tiny_run.json")).unwrap();
    let other = dir.path().join("other.json");
    std::fs::write(
        &other,
        text.replace("\"tiny_2fpga\"", "\"mobilenet_2fpga\""),
    )
    .unwrap();
    let e = format!(
        "{:#}",
        render(&other, &dir.path().join("a.html")).unwrap_err()
    );
    assert!(
        e.contains("other.json") && e.contains("mobilenet_2fpga") && e.contains("tiny_2fpga"),
        "{e}"
    );
    let link = dir.path().join("link.json");
    std::fs::write(&link, text.replace("fpga0:1->fpga1:0", "fpga0:0->fpga1:1")).unwrap();
    let e = format!(
        "{:#}",
        render(&link, &dir.path().join("b.html")).unwrap_err()
    );
    assert!(
        e.contains("link fpga0:0->fpga1:1 is no cable") && e.contains("fpga0:1->fpga1:0"),
        "{e}"
    );
    let broken = dir.path().join("broken.json");
    std::fs::write(
        &broken,
        "{\"deployment\": \"tiny_2fpga\",\n \"command\": 3}",
    )
    .unwrap();
    let e = format!(
        "{:#}",
        render(&broken, &dir.path().join("c.html")).unwrap_err()
    );
    assert!(
        e.contains("broken.json:2:") && e.contains("aurora-host infer"),
        "{e}"
    );
    assert!(!dir.path().join("c.html").exists());
}

#[test]
fn numbers_read_as_the_paper_prints_them() {
    assert_eq!(grouped(4460.92, 2), "4,460.92");
    assert_eq!(grouped(95.03, 2), "95.03");
    assert_eq!(grouped(1234567.0, 0), "1,234,567");
    assert_eq!(grouped(-1000.5, 1), "-1,000.5");
}
