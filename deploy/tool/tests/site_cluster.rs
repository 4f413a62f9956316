//! A site of a user's own, added as one more cluster file: its job script asks for its
//! partition, with its cards per node, and cables in its own syntax; a description with more
//! cards per node than its nodes have is refused naming both files. Nothing here is Noctua 2.

use crate::common;

use std::path::Path;

use deploy_tool::commands::{scripts_text, ScriptArgs};

/// A site of 2 cards per node, its own partition and its own link-switching command.
const SITE: &str = "\
name = \"mysite\"
description = \"a site with two cards per node\"

[job]
partition = \"fpga-small\"
cards_per_node = 2

[links]
command = \"link-switch\"
endpoint = \"{node}/{card}/{port}\"
argument = \"--cable={a}+{b}\"

[workers]
cpus_per_worker = 4
time = \"2:00:00\"
";

/// Four benchmark cards in a ring (QSFP 1 of card i to QSFP 0 of card i+1).
fn ring(cards_per_node: u32) -> String {
    format!(
        "name = \"ring4\"\nplatform = \"xilinx_u280_gen3x16_xdma_1_202211_1\"\n\
         app = \"aurora_bench\"\ncards_per_node = {cards_per_node}\n\n\
         [devices]\ncount = 4\nrole = \"forward\"\n\n[topology]\nkind = \"ring\"\n"
    )
}

fn scripts(dir: &Path, desc: &str) -> anyhow::Result<(String, String, serde_json::Value)> {
    let site = common::write(dir, "mysite.toml", SITE);
    let dep = common::write(dir, "ring4.toml", desc);
    let xclbins: Vec<String> = (0..4)
        .map(|i| format!("fpga{i}=x/fpga{i}.xclbin"))
        .collect();
    scripts_text(&ScriptArgs {
        deployment: &dep,
        platform: &common::platform(),
        cluster: &site,
        xclbins: &xclbins,
        host: "x/host",
        plan: None,
        finn_exec: None,
        devices_json: None,
        sims: &[],
        job_out: Path::new("job.sh"),
        run_out: Path::new("run.sh"),
        topology_out: Path::new("x/topology.json"),
    })
}

#[test]
fn a_third_cluster_file_gives_its_partition_nodes_and_cabling() {
    let dir = tempfile::tempdir().unwrap();
    let (job, _, _) = scripts(dir.path(), &ring(2)).unwrap();
    let directives: Vec<&str> = job.lines().filter(|l| l.starts_with("#SBATCH")).collect();
    // 4 cards, 2 per node: 2 nodes of 2 tasks; the site's partition; nothing of Noctua 2's
    assert_eq!(
        directives,
        [
            "#SBATCH -J ring4",
            "#SBATCH -N 2",
            "#SBATCH --ntasks-per-node=2",
            "#SBATCH -n 4",
            "#SBATCH -t 00:30:00",
            "#SBATCH -p fpga-small",
        ],
        "{job}"
    );
    for absent in [
        "--constraint",
        "module",
        "changeFPGAlinks",
        "--fpgalink",
        "--backend",
    ] {
        assert!(!job.contains(absent), "{absent} in\n{job}");
    }
    // fpga0 n0 c0, fpga1 n0 c1, fpga2 n1 c0, fpga3 n1 c1; cable i: QSFP 1 of card i to
    // QSFP 0 of card i+1, the last back to fpga0
    let want = [
        "--cable=0/0/1+0/1/0",
        "--cable=0/1/1+1/0/0",
        "--cable=1/0/1+1/1/0",
        "--cable=1/1/1+0/0/0",
    ];
    let cmd: Vec<&str> = job
        .lines()
        .skip_while(|l| !l.starts_with("link-switch"))
        .take_while(|l| !l.is_empty())
        .map(|l| l.trim_end_matches('\\').trim())
        .collect();
    assert_eq!(cmd[0], "link-switch", "{job}");
    let mut got = cmd[1..].to_vec();
    got.sort_unstable();
    assert_eq!(got, want, "{job}");
}

#[test]
fn more_cards_per_node_than_the_sites_nodes_have_is_refused_naming_both_files() {
    let dir = tempfile::tempdir().unwrap();
    let desc = ring(3);
    let e = format!("{:#}", scripts(dir.path(), &desc).unwrap_err());
    let dep = dir.path().join("ring4.toml");
    let site = dir.path().join("mysite.toml");
    let line = |text: &str, key: &str| text.lines().position(|l| l.starts_with(key)).unwrap() + 1;
    assert!(
        e.starts_with(&format!(
            "{}:{}: cards_per_node = 3",
            dep.display(),
            line(&desc, "cards_per_node")
        )),
        "{e}"
    );
    assert!(
        e.contains(&format!(
            "cluster mysite has 2 cards ({}:{})",
            site.display(),
            line(SITE, "cards_per_node")
        )),
        "{e}"
    );
}

#[test]
fn a_broken_cluster_file_is_an_error_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let site = common::write(
        dir.path(),
        "mysite.toml",
        &SITE.replace("partition = \"fpga-small\"", "partition = \"fpga small\""),
    );
    let dep = common::write(dir.path(), "ring4.toml", &ring(2));
    let e = common::tool(&[
        "scripts",
        "--deployment",
        dep.to_str().unwrap(),
        "--platform",
        common::platform().to_str().unwrap(),
        "--cluster",
        site.to_str().unwrap(),
        "--xclbin",
        "fpga0=a",
        "fpga1=b",
        "fpga2=c",
        "fpga3=d",
        "--host",
        "h",
        "--job-out",
        dir.path().join("job.sh").to_str().unwrap(),
        "--run-out",
        dir.path().join("run.sh").to_str().unwrap(),
        "--topology-out",
        dir.path().join("t.json").to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&e.stderr);
    assert!(!e.status.success());
    assert!(
        stderr.contains(&format!("{}:5: job.partition:", site.display())),
        "{stderr}"
    );
    // nothing half-written
    assert!(!dir.path().join("job.sh").exists());
}
