//! The HTML report parsed back with an XML parser: one SVG card per device and one cable per
//! link, the cut's bandwidth on its cable, the paper's figures labelled as measured.

use crate::common;

use std::path::PathBuf;

use deploy_tool::commands::{link_config_text, report_text, LinkConfigArgs};

fn svg_of(html: &str) -> roxmltree::Document<'_> {
    let start = html.find("<svg").expect("an inline svg");
    let end = html.find("</svg>").unwrap() + "</svg>".len();
    roxmltree::Document::parse(&html[start..end]).expect("the SVG is well-formed XML")
}

fn count(doc: &roxmltree::Document, class: &str) -> Vec<String> {
    doc.descendants()
        .filter(|n| n.has_tag_name("g") && n.attribute("class") == Some(class))
        .map(|n| {
            n.attribute("data-device")
                .or(n.attribute("data-a"))
                .unwrap_or("")
                .to_string()
        })
        .collect()
}

#[test]
fn mobilenet_report_shows_both_cards_the_cable_and_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let dep = common::deployment("mobilenet_2fpga");
    let plat = common::platform();
    let plan = common::plan();
    let kernels = common::all_kernels();
    let mut sims: Vec<PathBuf> = Vec::new();
    for dev in ["fpga0", "fpga1"] {
        let (_, sim, _) = link_config_text(&LinkConfigArgs {
            deployment: &dep,
            platform: &plat,
            device: dev,
            kernels: &kernels,
            plan: Some(&plan),
            flow_control: None,
            finn_model: None,
            cfg_out: std::path::Path::new("x"),
            sim_out: std::path::Path::new("y"),
        })
        .unwrap();
        sims.push(common::write(
            dir.path(),
            &format!("{dev}.sim.json"),
            &sim.to_string(),
        ));
    }
    let html = report_text(&dep, &plat, Some(&plan), &sims).unwrap();
    let doc = svg_of(&html);
    assert_eq!(count(&doc, "card"), ["fpga0", "fpga1"]);
    assert_eq!(count(&doc, "cable"), ["fpga0:1"]);
    let kernels: Vec<&str> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("kernel"))
        .filter_map(|n| n.text())
        .collect();
    assert!(
        kernels.contains(&"dma_in_0 (hls)") && kernels.contains(&"finn_fpga1 (finn)"),
        "{kernels:?}"
    );
    let plan_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    let gbps = format!("{:.2} Gb/s", plan_json["cuts"][0]["gbps"].as_f64().unwrap());
    assert!(html.contains(&gbps), "no {gbps}");
    assert!(
        html.contains("doi 10.1145/3728179.3728190"),
        "the paper is cited"
    );
    assert!(html.contains("4460.92") && html.contains("39 %") && html.contains("40 %"));
    // a utilisation bar per device and resource inside each card
    let bars = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("util"))
        .count();
    assert_eq!(bars, 10);
    // a utilisation row per device and resource
    assert_eq!(html.matches("<tr class=\"util\">").count(), 10);
}

#[test]
fn ring_report_has_48_cards_and_48_cables() {
    let html = report_text(
        &common::deployment("aurora_ring_48"),
        &common::platform(),
        None,
        &[],
    )
    .unwrap();
    let doc = svg_of(&html);
    assert_eq!(count(&doc, "card").len(), 48);
    assert_eq!(count(&doc, "cable").len(), 48);
}
