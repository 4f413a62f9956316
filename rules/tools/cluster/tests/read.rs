//! The reader against the project's cluster files (their facts against the public examples
//! they come from) and against broken files (each error names the file, the line and the key).

use std::path::{Path, PathBuf};

use cluster_file::keys::{self, KEYS};
use cluster_file::Cluster;

/// The project's cluster files (tests run from rules/tools/cluster).
fn project(name: &str) -> PathBuf {
    Path::new("../../../toolchains/clusters").join(format!("{name}.toml"))
}

const MINIMAL: &str =
    "name = \"site\"\n[job]\n[workers]\ncpus_per_worker = 1\ntime = \"1:00:00\"\n";

fn parse(text: &str) -> anyhow::Result<Cluster> {
    Cluster::parse("clusters/site.toml", text)
}

fn err(text: &str) -> String {
    format!("{:#}", parse(text).unwrap_err())
}

#[test]
fn noctua2_names_cable_ends_as_pc2_auroraflow_does() {
    let c = Cluster::read(&project("noctua2")).unwrap();
    let links = c.links.expect("noctua2 cables its links");
    // pc2/AuroraFlow test/scripts/configure_ring_hw.sh at 957c8bb6: the first cable of the
    // ring over a node's three cards, `changeFPGAlinksXilinx --fpgalink=n00:acl0:ch1-n00:acl1:ch0`
    let a = links.end(0, 0, 1);
    let b = links.end(0, 1, 0);
    assert_eq!(
        format!("{} {}", links.command, links.cable(&a, &b)),
        "changeFPGAlinksXilinx --fpgalink=n00:acl0:ch1-n00:acl1:ch0"
    );
    // PC2 wiki "FPGA-to-FPGA Networking": node numbers have two digits
    assert_eq!(links.end(12, 2, 1), "n12:acl2:ch1");
    assert_eq!(c.job.partition.as_deref(), Some("fpga"));
    assert_eq!(c.job.cards_per_node.map(|(n, _)| n), Some(3));
    assert_eq!(c.workers.qos.as_deref(), Some("fpgasynthesis"));
    assert!(c.workers.on_compute_nodes);
}

#[test]
fn local_asks_for_nothing_site_specific() {
    let c = Cluster::read(&project("local")).unwrap();
    assert_eq!(c.name, "local");
    assert!(c.job.partition.is_none() && c.job.modules.is_none() && c.job.backend.is_none());
    assert!(c.links.is_none() && c.job.cards_per_node.is_none());
    assert!(c.workers.partition.is_none() && c.workers.qos.is_none());
    assert!(!c.workers.on_compute_nodes);
}

#[test]
fn every_documented_key_is_read_and_an_unknown_one_is_refused() {
    // a file with every key of KEYS, one per line, in its table
    let value = |key: &str| match key {
        "job.cards_per_node" | "workers.cpus_per_worker" => "2".to_string(),
        "job.platform_constraint" | "workers.on_compute_nodes" => "true".to_string(),
        "job.modules" => "[\"m/1\"]".to_string(),
        "links.endpoint" => "\"{node}.{card}.{port}\"".to_string(),
        "links.argument" => "\"{a}+{b}\"".to_string(),
        "name" => "\"site\"".to_string(),
        "workers.time" => "\"1:00:00\"".to_string(),
        "workers.mem_per_cpu" => "\"1G\"".to_string(),
        _ => "\"x\"".to_string(),
    };
    let mut text = String::new();
    let mut table = "";
    for (key, _, _) in KEYS {
        let (t, k) = key.rsplit_once('.').unwrap_or(("", key));
        if t != table {
            text += &format!("[{t}]\n");
            table = t;
        }
        text += &format!("{k} = {}\n", value(key));
    }
    let c = parse(&text).unwrap_or_else(|e| panic!("{e:#}\n{text}"));
    assert_eq!(c.job.cards_per_node, Some((2, 5)));
    assert_eq!(c.links.unwrap().cable("A", "B"), "A+B");
    // a required key missing, and a key not in KEYS
    for (key, required, _) in KEYS.iter().filter(|(_, r, _)| *r) {
        let (_, k) = key.rsplit_once('.').unwrap_or(("", key));
        let without: String = text
            .lines()
            .filter(|l| !l.starts_with(&format!("{k} =")))
            .map(|l| format!("{l}\n"))
            .collect();
        assert!(*required && parse(&without).is_err(), "{key} is required");
    }
    let e = err(&text.replace("[workers]", "[workers]\ncpus = 3"));
    assert!(e.starts_with("clusters/site.toml:"), "{e}");
    assert!(e.contains("unknown field `cpus`"), "{e}");
}

#[test]
fn errors_name_the_file_the_line_and_the_key() {
    let e = err(&MINIMAL.replace("[job]", "[job]\npartition = \"fpga nodes\""));
    assert!(e.starts_with("clusters/site.toml:3: job.partition:"), "{e}");
    let e = err(&MINIMAL.replace("[job]", "[job]\ncards_per_node = 0"));
    assert!(
        e.starts_with("clusters/site.toml:3: job.cards_per_node: must be at least 1"),
        "{e}"
    );
    let e = err(&MINIMAL.replace("[job]", "[job]\nmodules = [\"ok\", \"$(evil)\"]"));
    assert!(e.starts_with("clusters/site.toml:3: job.modules:"), "{e}");
    let e = err(&format!(
        "{MINIMAL}[links]\ncommand = \"switch\"\nendpoint = \"{{node}}:{{slot}}\"\nargument = \"{{a}}-{{b}}\"\n"
    ));
    assert!(
        e.starts_with("clusters/site.toml:8: links.endpoint: {slot} is not a field"),
        "{e}"
    );
    let e = err(&MINIMAL.replace("name = \"site\"", "name = \"other\""));
    assert!(e.starts_with("clusters/site.toml:1: name:"), "{e}");
    assert!(e.contains("other.toml"), "{e}");
    let e = err(&MINIMAL.replace("\"1:00:00\"", "\"an hour\""));
    assert!(e.starts_with("clusters/site.toml:5: workers.time:"), "{e}");
    let e = format!(
        "{:#}",
        Cluster::read(Path::new("no/such.toml")).unwrap_err()
    );
    assert!(e.starts_with("no/such.toml: cannot read"), "{e}");
}

#[test]
fn the_readme_reference_is_the_generated_one() {
    let readme = project("README").with_extension("md");
    let text = std::fs::read_to_string(&readme).unwrap();
    assert_eq!(
        keys::splice(&text).as_deref(),
        Some(text.as_str()),
        "{} is out of date: run `deploy-tool describe-cluster --write {}`",
        readme.display(),
        "toolchains/clusters/README.md"
    );
}
