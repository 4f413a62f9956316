//! Job and run scripts: the `--fpgalink` lines against AuroraFlow's documented examples,
//! the Slurm header on both clusters of the project (toolchains/clusters), and both scripts through `bash -n` and shellcheck.

use crate::common;

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use deploy_tool::commands::{scripts_text, ScriptArgs};

/// pc2/AuroraFlow test/scripts/configure_pair_hw.sh at 957c8bb6df0bcb3686d4dbc0314e3703466699be:
/// on each of the three cards of a node, QSFP 0 to QSFP 1.
const CONFIGURE_PAIR_HW: &str = "changeFPGAlinksXilinx --fpgalink=n00:acl1:ch1-n00:acl1:ch0 --fpgalink=n00:acl0:ch0-n00:acl0:ch1 --fpgalink=n00:acl2:ch0-n00:acl2:ch1";
/// pc2/AuroraFlow test/scripts/configure_ring_hw.sh at 957c8bb6df0bcb3686d4dbc0314e3703466699be:
/// a ring over the three cards of a node.
const CONFIGURE_RING_HW: &str = "changeFPGAlinksXilinx --fpgalink=n00:acl0:ch1-n00:acl1:ch0 --fpgalink=n00:acl1:ch1-n00:acl2:ch0 --fpgalink=n00:acl2:ch1-n00:acl0:ch0";

fn three_cards(kind: &str, roles: [&str; 3]) -> String {
    let mut s = format!(
        "name = \"three_{kind}\"\nplatform = \"xilinx_u280_gen3x16_xdma_1_202211_1\"\n\
         app = \"aurora_bench\"\ncards_per_node = 3\nclock_mhz = 250\n"
    );
    for (i, r) in roles.iter().enumerate() {
        s += &format!("\n[[device]]\nname = \"fpga{i}\"\nnode = 0\ncard = {i}\nrole = \"{r}\"\n");
    }
    s + &format!("\n[topology]\nkind = \"{kind}\"\n")
}

fn scripts(dep: &Path, cluster: &str, n: usize) -> (String, String, serde_json::Value) {
    let xclbins: Vec<String> = (0..n)
        .map(|i| format!("fpga{i}=buck-out/x/fpga{i}.xclbin"))
        .collect();
    let plat = common::platform();
    scripts_text(&ScriptArgs {
        deployment: dep,
        platform: &plat,
        cluster: &common::cluster(cluster),
        xclbins: &xclbins,
        host: "buck-out/x/host",
        plan: None,
        finn_exec: None,
        devices_json: None,
        sims: &[],
        job_out: Path::new("job.sh"),
        run_out: Path::new("run.sh"),
        topology_out: Path::new("buck-out/x/topology.json"),
    })
    .expect("scripts")
}

/// The `--fpgalink` arguments of a script or a command line, as unordered endpoint pairs.
fn links(text: &str) -> Vec<BTreeSet<String>> {
    text.split_whitespace()
        .filter_map(|w| w.strip_prefix("--fpgalink="))
        .map(|l| {
            let (a, b) = l.split_once('-').unwrap();
            [a.to_string(), b.to_string()].into_iter().collect()
        })
        .collect()
}

fn sorted(mut v: Vec<BTreeSet<String>>) -> Vec<BTreeSet<String>> {
    v.sort();
    v
}

fn assert_valid_bash(name: &str, text: &str) {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join(name);
    std::fs::write(&p, text).unwrap();
    let n = Command::new("bash").arg("-n").arg(&p).output().unwrap();
    assert!(
        n.status.success(),
        "bash -n {name}: {}",
        String::from_utf8_lossy(&n.stderr)
    );
    let sc = Command::new("shellcheck")
        .arg(&p)
        .output()
        .expect("shellcheck is installed (tools/bootstrap/apt.txt)");
    assert!(
        sc.status.success(),
        "shellcheck {name}:\n{}\n{text}",
        String::from_utf8_lossy(&sc.stdout)
    );
}

#[test]
fn port_loop_on_three_cards_is_auroraflows_pair_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let dep = common::write(
        dir.path(),
        "pair3.toml",
        &three_cards("loopback", ["bench"; 3]),
    );
    let (job, _, _) = scripts(&dep, "noctua2", 3);
    assert_eq!(
        sorted(links(&job)),
        sorted(links(CONFIGURE_PAIR_HW)),
        "{job}"
    );
}

#[test]
fn ring_of_three_is_auroraflows_ring_configuration() {
    let dir = tempfile::tempdir().unwrap();
    let dep = common::write(
        dir.path(),
        "ring3.toml",
        &three_cards("ring", ["bench", "forward", "forward"]),
    );
    let (job, _, topo) = scripts(&dep, "noctua2", 3);
    let cmd: String = job
        .lines()
        .skip_while(|l| !l.starts_with("changeFPGAlinksXilinx"))
        .take_while(|l| !l.is_empty())
        .map(|l| l.trim_end_matches('\\').trim())
        .collect::<Vec<_>>()
        .join(" ");
    // same links in the same order, written the same way
    assert_eq!(cmd, CONFIGURE_RING_HW, "{job}");
    assert_eq!(topo["links"].as_array().unwrap().len(), 3);
    assert_eq!(topo["links"][2]["fpgalink"], "n00:acl2:ch1-n00:acl0:ch0");
}

#[test]
fn noctua2_job_has_the_fpga_partition_constraint_and_ranks() {
    let dep = common::deployment("aurora_ring_48");
    let (job, run, topo) = scripts(&dep, "noctua2", 48);
    // the script's links are the topology's links, and the ring closes on fpga0
    let from_topology: Vec<BTreeSet<String>> = topo["links"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| links(&format!("--fpgalink={}", l["fpgalink"].as_str().unwrap())).remove(0))
        .collect();
    assert_eq!(sorted(links(&job)), sorted(from_topology));
    assert!(
        job.contains("--fpgalink=n15:acl2:ch1-n00:acl0:ch0"),
        "{job}"
    );
    for line in [
        "#SBATCH -p fpga",
        "#SBATCH --constraint=xilinx_u280_xrt2.x",
        "#SBATCH -N 16",
        "#SBATCH --ntasks-per-node=3",
        "#SBATCH -n 48",
        "#SBATCH -t 01:00:00",
        "module reset",
        "ml changeFPGAlinks",
    ] {
        assert!(job.lines().any(|l| l == line), "no `{line}` in\n{job}");
    }
    // the ranks drive the cards; the run script (simulation) does not
    assert!(job.contains(" --backend xrt"), "{job}");
    assert!(!run.contains("--backend"), "{run}");
    // one --fpgalink per cable, every endpoint at most once, both ends on allocated cards
    let l = links(&job);
    assert_eq!(l.len(), 48);
    let mut seen = BTreeSet::new();
    for pair in &l {
        for e in pair {
            assert!(seen.insert(e.clone()), "{e} twice");
            let (n, rest) = e.split_once(":acl").unwrap();
            let node: u32 = n.trim_start_matches('n').parse().unwrap();
            let card: u32 = rest.split(":ch").next().unwrap().parse().unwrap();
            assert!(node < 16 && card < 3, "{e}");
        }
    }
    // the host starts one rank per --xclbin (mpirun -n 48 inside the allocation)
    assert_eq!(run.matches("--xclbin ").count(), 48);
    assert_eq!(job.matches("--xclbin ").count(), 48);
    // rank order: fpga0's xclbin first, fpga47's last
    let p0 = run.find("fpga0=buck-out/x/fpga0.xclbin").unwrap();
    let p47 = run.find("fpga47=buck-out/x/fpga47.xclbin").unwrap();
    assert!(p0 < p47);
    assert_valid_bash("job.sh", &job);
    assert_valid_bash("run.sh", &run);
}

#[test]
fn local_cluster_has_the_same_ranks_without_fpga_options() {
    let dep = common::deployment("aurora_pair");
    let (job, run, _) = scripts(&dep, "local", 2);
    assert!(job.contains("#SBATCH -N 1\n"));
    assert!(job.contains("#SBATCH --ntasks-per-node=2\n"));
    assert_eq!(job.matches("--xclbin ").count(), 2);
    assert!(job.contains("exec \"${host[@]}\" \"$@\""));
    for absent in [
        "-p fpga",
        "--constraint",
        "changeFPGAlinksXilinx",
        "--fpgalink",
        "module",
    ] {
        assert!(!job.contains(absent), "local job has {absent}:\n{job}");
    }
    assert_eq!(run.matches("--xclbin ").count(), 2);
    assert!(run.contains("submit)") && run.contains("sbatch --parsable"));
    assert_valid_bash("job.sh", &job);
    assert_valid_bash("run.sh", &run);
    let (noctua, _, _) = scripts(&dep, "noctua2", 2);
    assert_eq!(
        sorted(links(&noctua)),
        sorted(links(
            "--fpgalink=n00:acl0:ch0-n00:acl1:ch0 --fpgalink=n00:acl0:ch1-n00:acl1:ch1"
        ))
    );
    assert_valid_bash("noctua.sh", &noctua);
    assert!(
        !job.contains("--backend"),
        "the local job runs the simulation:\n{job}"
    );
}

#[test]
fn noctua2_rejects_more_cards_per_node_than_a_node_has() {
    let dir = tempfile::tempdir().unwrap();
    let text = three_cards("ring", ["bench", "forward", "forward"])
        .replace("cards_per_node = 3", "cards_per_node = 4");
    let dep = common::write(dir.path(), "four.toml", &text);
    let plat = common::platform();
    let xclbins: Vec<String> = (0..3).map(|i| format!("fpga{i}=x{i}")).collect();
    let (noctua2, local) = (common::cluster("noctua2"), common::cluster("local"));
    let args = |cluster| ScriptArgs {
        deployment: &dep,
        platform: &plat,
        cluster,
        xclbins: &xclbins,
        host: "host",
        plan: None,
        finn_exec: None,
        devices_json: None,
        sims: &[],
        job_out: Path::new("job.sh"),
        run_out: Path::new("run.sh"),
        topology_out: Path::new("t.json"),
    };
    let msg = format!("{:#}", scripts_text(&args(&noctua2)).unwrap_err());
    let line = text
        .lines()
        .position(|l| l.starts_with("cards_per_node"))
        .unwrap()
        + 1;
    assert!(
        msg.starts_with(&format!("{}:{line}:", dep.display())),
        "{msg}"
    );
    // PC2 wiki, "Additional Information for FPGA Projects": 3 U280s per FPGA node; the
    // message names the cluster file's line that says so
    let cards_line = std::fs::read_to_string(&noctua2)
        .unwrap()
        .lines()
        .position(|l| l.starts_with("cards_per_node = 3"))
        .unwrap()
        + 1;
    assert!(
        msg.contains(&format!("has 3 cards ({}:{cards_line})", noctua2.display())),
        "{msg}"
    );
    // the local clusters' simulated ranks are processes: no such limit
    assert!(scripts_text(&args(&local)).is_ok());
}
