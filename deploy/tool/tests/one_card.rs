//! The report's "network against one card" table on ResNet-50 (deploy/resnet50_3fpga.toml
//! and the estimates fixture finn/resnet50/estimates.json, both as the deployment uses them),
//! checked against two references of its own: the network's total of a resource summed here
//! from FINN's per-layer estimates, and the partitioner's refusal of the same network on the
//! description's first card alone ("the network needs at least N BRAM_18K but all 1 devices
//! together (fpga0) allow M"), which computes need and budget on its own code path.

use crate::common;

use deploy_tool::commands::report_text;
use finn_partitioner::{devices, estimates, topology, Objective, Options};

const RESOURCE: &str = "BRAM_18K";

fn estimates_path() -> std::path::PathBuf {
    common::root().join("finn/resnet50/estimates.json")
}

/// The partitioner on the description's cards, as `//deploy:resnet50_3fpga` runs it
/// (balanced, the description's budgets and SLRs, its cables); with `first_only`, on its
/// first card alone.
fn partition(first_only: bool) -> Result<String, String> {
    let deployment = common::deployment("resnet50_3fpga");
    let (dep, plat) = deploy_tool::commands::load(&deployment, &common::platform()).unwrap();
    let mut devices_json = deploy_tool::partitioner::devices_json(&dep, &plat);
    let mut topo = deploy_tool::partitioner::topology_json(&dep);
    if first_only {
        let first = devices_json["devices"][0].clone();
        devices_json["devices"] = serde_json::json!([first]);
        topo = serde_json::json!({"kind": "chain"});
    }
    let devs: Vec<devices::DeviceSpec> =
        serde_json::from_value(devices_json["devices"].clone()).unwrap();
    let devs = devices::resolve_all(&devs).unwrap();
    let topo: topology::Topology = serde_json::from_value(topo).unwrap();
    let est = estimates::Estimates::load(&estimates_path()).unwrap();
    let opts = Options {
        objective: Objective::Balanced,
        slrs: finn_partitioner::slr::from_devices_json(&devices_json).unwrap(),
        ..Options::default()
    };
    finn_partitioner::partition(&est, &devs, &topo, &opts)
        .map(|p| serde_json::to_string_pretty(&p).unwrap())
        .map_err(|e| format!("{e:#}"))
}

/// The number after `word` in `text` (the partitioner's message).
fn number_after(text: &str, word: &str) -> f64 {
    let rest = &text[text
        .find(word)
        .unwrap_or_else(|| panic!("no {word:?} in {text}"))
        + word.len()..];
    let n: String = rest
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    n.parse()
        .unwrap_or_else(|_| panic!("no number after {word:?} in {text}"))
}

/// The cells of the table row of `resource` (class "one-card ...").
fn row(html: &str, resource: &str) -> (Vec<String>, bool) {
    let table = table(html);
    let doc = roxmltree::Document::parse(&table).unwrap();
    let tr = doc
        .descendants()
        .filter(|n| n.has_tag_name("tr"))
        .find(|n| {
            n.attribute("class")
                .is_some_and(|c| c.starts_with("one-card"))
                && n.first_child().and_then(|c| c.text()) == Some(resource)
        })
        .unwrap_or_else(|| panic!("no {resource} row in {html}"));
    let cells = tr
        .children()
        .filter(|n| n.has_tag_name("td"))
        .map(|n| n.text().unwrap_or("").to_string())
        .collect();
    (cells, tr.attribute("class") == Some("one-card over"))
}

fn table(html: &str) -> String {
    let start = html
        .find("<h2>The network against one card</h2>")
        .expect("the one-card section");
    let t = start + html[start..].find("<table>").unwrap();
    let end = t + html[t..].find("</table>").unwrap() + "</table>".len();
    html[t..end].to_string()
}

#[test]
fn resnet50_report_shows_why_one_card_is_not_enough() {
    let deployment = common::deployment("resnet50_3fpga");
    let dir = tempfile::tempdir().unwrap();
    let plan = common::write(dir.path(), "plan.json", &partition(false).unwrap());
    let html = report_text(&deployment, &common::platform(), Some(&plan), &[]).unwrap();

    // the description's first card alone: the partitioner refuses, with its own figures
    let refusal = partition(true).expect_err("ResNet-50 fits one U280");
    let needle = format!("{RESOURCE} but all 1 devices together (fpga0) allow");
    assert!(refusal.contains(&needle), "{refusal}");
    let need = number_after(&refusal, "needs at least");
    let allow = number_after(&refusal, "(fpga0) allow");

    let summed: f64 = {
        let est: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(estimates_path()).unwrap()).unwrap();
        est["layers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["res"][RESOURCE].as_f64().unwrap_or(0.0))
            .sum()
    };
    let (cells, over) = row(&html, RESOURCE);
    assert_eq!(cells[1], format!("{summed:.0}"), "network total, {cells:?}");
    assert_eq!(
        cells[1],
        format!("{need:.0}"),
        "partitioner's need, {cells:?}"
    );
    assert_eq!(
        cells[2],
        format!("{allow:.0}"),
        "one card's allowance, {cells:?}"
    );
    assert_eq!(cells[3], "80 %");
    assert!(over, "{RESOURCE} is not marked over one card: {cells:?}");
    assert!(
        html.contains("one card is not enough: BRAM_18K"),
        "no verdict naming BRAM_18K"
    );
    // LUT (about 11 % of the card) fits: not marked
    let (lut, lut_over) = row(&html, "LUT");
    assert!(!lut_over, "LUT marked over one card: {lut:?}");
}

/// `beside = "finn_examples_resnet50"`: the report sets the plan beside finn-examples'
/// measured ResNet-50 (read here from paper/figures.toml itself), not the paper's MobileNet.
#[test]
fn resnet50_report_sits_beside_the_published_resnet50() {
    let deployment = common::deployment("resnet50_3fpga");
    let dir = tempfile::tempdir().unwrap();
    let plan_text = partition(false).unwrap();
    let plan = common::write(dir.path(), "plan.json", &plan_text);
    let html = report_text(&deployment, &common::platform(), Some(&plan), &[]).unwrap();
    let figures: toml::Value = toml::from_str(
        &std::fs::read_to_string(common::root().join("paper/figures.toml")).unwrap(),
    )
    .unwrap();
    let published = &figures["finn_examples_resnet50"];
    let plan_json: serde_json::Value = serde_json::from_str(&plan_text).unwrap();
    let start = html
        .find("<h2>Next to the published ResNet-50</h2>")
        .expect("the published ResNet-50 section");
    let section = &html[start..start + html[start..].find("</table>").unwrap()];
    for want in [
        format!("<td>1 × {}</td>", published["board"].as_str().unwrap()),
        format!("<td>{:.2}</td>", published["fps"].as_float().unwrap()),
        format!(
            "<td>{:.1} ms (measured)</td>",
            published["latency_ms"].as_float().unwrap()
        ),
        format!("<td>{:.2}</td>", plan_json["fps"].as_f64().unwrap()),
        format!(
            "<td>{:.1} ms (FINN's no-overlap",
            plan_json["finn_no_overlap_latency_ms"].as_f64().unwrap()
        ),
        "<td>3 × xilinx_u280_gen3x16_xdma_1_202211_1</td>".to_string(),
    ] {
        assert!(section.contains(&want), "no {want:?} in {section}");
    }
    assert!(
        !html.contains("Next to the paper"),
        "a ResNet-50 report compares with the paper's MobileNet"
    );
}
