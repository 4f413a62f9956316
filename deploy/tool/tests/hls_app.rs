//! `app = "hls"` against expectations written here by hand from the v++ link-config syntax
//! (UG1393, "Vitis Compiler Configuration File": `nk=<kernel>:<count>:<cu>,...`,
//! `slr=<cu>:<SLR>`, `sp=<cu>.<port>:<bank>`, `stream_connect=<cu>.<out>:<cu>.<in>`) and the
//! deployment's own description (deploy/pipe_2fpga.toml): which CUs each card gets, which
//! cable direction a stream takes, where width converters and tie-offs go.
//!
//! The `pipe_2fpga_*` tests read the files `./forge build //deploy:pipe_2fpga` built when
//! //deploy/tool:pipe_2fpga_outputs runs them (PIPE_2FPGA_* in the env, project-relative); under
//! `cargo test` they check the same expectation on what the library makes of the same
//! description and the kernel descriptions of tests/data/kernels.

use crate::common;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use deploy_tool::commands::{link_config_text, scripts_text, LinkConfigArgs, ScriptArgs};

fn kernels() -> Vec<PathBuf> {
    let mut k = common::all_kernels();
    k.extend(common::kernels(&["producer", "consumer"]));
    k
}

fn link(desc: &Path, device: &str) -> (String, serde_json::Value) {
    let plat = common::platform();
    let fc = common::kernel_toml();
    let (cfg, sim, _) = link_config_text(&LinkConfigArgs {
        deployment: desc,
        platform: &plat,
        device,
        kernels: &kernels(),
        plan: None,
        flow_control: Some(&fc),
        finn_model: None,
        cfg_out: Path::new("x.cfg"),
        sim_out: Path::new("x.json"),
    })
    .expect("links");
    (cfg, sim)
}

/// A built file named by `var` when the forge test gives it, else None.
fn built(var: &str) -> Option<String> {
    std::env::var(var)
        .ok()
        .map(|p| std::fs::read_to_string(common::root().join(&p)).expect("built file"))
}

/// The `nk=`, `slr=`, `sp=` and `stream_connect=` lines, as a set.
fn lines(cfg: &str) -> BTreeSet<String> {
    common::section(cfg, "connectivity")
        .into_iter()
        .filter(|l| {
            ["nk=", "slr=", "sp=", "stream_connect="]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .collect()
}

fn set(v: &[&str]) -> BTreeSet<String> {
    v.iter().map(|s| s.to_string()).collect()
}

#[test]
fn pipe_2fpga_link_configs() {
    let desc = common::deployment("pipe_2fpga");
    // fpga0: producer_0 sends over its QSFP 1 (chain: port 1 of fpga0 to port 0 of fpga1),
    // nothing comes back, so the link's rx_axis goes to a tie-off sink, whose count word
    // takes the first bank the description leaves free (it names HBM[0] for src).
    let fpga0 = set(&[
        "nk=aurora_flow_1:1:aurora_flow_1",
        "nk=producer:1:producer_0",
        "nk=tie_off_sink:1:tie_off_sink_1",
        "slr=aurora_flow_1:SLR2",
        "slr=producer_0:SLR0",
        "sp=producer_0.m_axi_gmem:HBM[0]",
        "sp=tie_off_sink_1.m_axi_gmem:HBM[1]",
        "stream_connect=producer_0.out:aurora_flow_1.tx_axis",
        "stream_connect=aurora_flow_1.rx_axis:tie_off_sink_1.in",
    ]);
    // fpga1: consumer_0 receives on QSFP 0, its tx_axis is driven by a tie-off source;
    // producer_1 -> consumer_1 on the card; banks in file order, consumer_1's named HBM[4].
    let fpga1 = set(&[
        "nk=aurora_flow_0:1:aurora_flow_0",
        "nk=consumer:2:consumer_0,consumer_1",
        "nk=producer:1:producer_1",
        "nk=tie_off_source:1:tie_off_source_0",
        "slr=aurora_flow_0:SLR2",
        "sp=consumer_0.m_axi_gmem:HBM[0]",
        "sp=producer_1.m_axi_gmem:HBM[1]",
        "sp=consumer_1.m_axi_gmem:HBM[4]",
        "stream_connect=aurora_flow_0.rx_axis:consumer_0.in",
        "stream_connect=producer_1.out:consumer_1.in",
        "stream_connect=tie_off_source_0.out:aurora_flow_0.tx_axis",
    ]);
    for (dev, want, var) in [
        ("fpga0", fpga0, "PIPE_2FPGA_FPGA0_CFG"),
        ("fpga1", fpga1, "PIPE_2FPGA_FPGA1_CFG"),
    ] {
        let cfg = built(var).unwrap_or_else(|| link(&desc, dev).0);
        assert_eq!(lines(&cfg), want, "{dev}:\n{cfg}");
    }
}

/// The 64-bit producer stream meets 512-bit ports: a width converter on the stream into
/// the link kernel (fpga0) and on the stream on fpga1, none on the 512-bit rx side.
#[test]
fn pipe_width_converters_in_the_sim_description() {
    let desc = common::deployment("pipe_2fpga");
    let conv = |sim: &serde_json::Value, from: &str| {
        sim["streams"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["from"] == from)
            .unwrap_or_else(|| panic!("no stream from {from}"))["converter"]
            .clone()
    };
    let (_, s0) = link(&desc, "fpga0");
    let (_, s1) = link(&desc, "fpga1");
    let widen = serde_json::json!({"from_width": 64, "to_width": 512});
    assert_eq!(conv(&s0, "producer_0.out"), widen);
    assert_eq!(conv(&s1, "producer_1.out"), widen);
    assert!(conv(&s1, "aurora_flow_0.rx_axis").is_null());
    assert_eq!(s0["links"][0]["idle_rx"], true);
    assert_eq!(s1["links"][0]["idle_tx"], true);
}

fn scripts(desc: &Path, cluster: &str) -> (String, String, serde_json::Value) {
    let plat = common::platform();
    let dir = tempfile::tempdir().unwrap();
    let sims: Vec<PathBuf> = ["fpga0", "fpga1"]
        .iter()
        .map(|dev| {
            let sim = link(desc, dev).1.to_string();
            common::write(dir.path(), &format!("{dev}.sim.json"), &sim)
        })
        .collect();
    scripts_text(&ScriptArgs {
        deployment: desc,
        platform: &plat,
        cluster: &common::cluster(cluster),
        xclbins: &["fpga0=x/fpga0.xclbin".into(), "fpga1=x/fpga1.xclbin".into()],
        host: "x/host",
        plan: None,
        finn_exec: None,
        devices_json: None,
        sims: &sims,
        job_out: Path::new("job.sh"),
        run_out: Path::new("run.sh"),
        topology_out: Path::new("x/topology.json"),
    })
    .expect("scripts")
}

/// topology.json lists every CU with its scalar defaults as the description gives them and
/// the bank of each m_axi argument (named in the description, else assigned in order on its
/// card: fpga1's consumer_0 then producer_1, HBM[4] being consumer_1's), and each stream
/// with its cable direction.
#[test]
fn pipe_2fpga_topology_cus() {
    let desc = common::deployment("pipe_2fpga");
    let topo: serde_json::Value = match built("PIPE_2FPGA_TOPOLOGY") {
        Some(t) => serde_json::from_str(&t).unwrap(),
        None => scripts(&desc, "local").2,
    };
    let want = serde_json::json!([
        {"device": "fpga0", "cu": "producer_0", "kernel": "producer",
         "scalars": {"count": 1024}, "memory": {"src": "HBM[0]"}},
        {"device": "fpga1", "cu": "consumer_0", "kernel": "consumer",
         "scalars": {"count": 128}, "memory": {"dst": "HBM[0]"}},
        {"device": "fpga1", "cu": "producer_1", "kernel": "producer",
         "scalars": {"count": 64}, "memory": {"src": "HBM[1]"}},
        {"device": "fpga1", "cu": "consumer_1", "kernel": "consumer",
         "scalars": {"count": 8}, "memory": {"dst": "HBM[4]"}},
    ]);
    assert_eq!(topo["cus"], want);
    assert_eq!(
        topo["streams"][0]["cable"],
        serde_json::json!({"from": "fpga0:1", "to": "fpga1:0"})
    );
    assert!(topo["streams"][1]["cable"].is_null());
}

/// The user's host decides what to run: no default command in either script (the other
/// apps keep theirs: tests/job_scripts.rs).
#[test]
fn pipe_2fpga_scripts_without_a_default_command() {
    let desc = common::deployment("pipe_2fpga");
    let (job, run, _) = scripts(&desc, "noctua2");
    let job = built("PIPE_2FPGA_JOB").unwrap_or(job);
    for (name, text) in [("job.sh", &job), ("run.sh", &run)] {
        assert!(!text.contains("set -- "), "{name}:\n{text}");
        assert!(
            text.contains("exec \"${host[@]}\" \"$@\""),
            "{name}:\n{text}"
        );
    }
    assert!(
        run.contains("usage: run.sh [submit|local] [ARGS] ..."),
        "{run}"
    );
}

/// Both directions of one cable carry a stream (a ring's halo rows each way): one link
/// kernel per card, both directions wired, no tie-off.
#[test]
fn both_directions_of_one_cable() {
    let dir = tempfile::tempdir().unwrap();
    let text =
        "name = \"duplex\"\nplatform = \"xilinx_u280_gen3x16_xdma_1_202211_1\"\napp = \"hls\"\n\n\
        [[device]]\nname = \"fpga0\"\nnode = 0\ncard = 0\n\n\
        [[device]]\nname = \"fpga1\"\nnode = 0\ncard = 1\n\n\
        [[link]]\na = \"fpga0:0\"\nb = \"fpga1:0\"\n\n\
        [[kernel]]\ncu = \"p\"\nkernel = \"producer\"\ndevice = \"fpga0\"\n\n\
        [[kernel]]\ncu = \"c\"\nkernel = \"consumer\"\ndevice = \"fpga0\"\n\n\
        [[kernel]]\ncu = \"p\"\nkernel = \"producer\"\ndevice = \"fpga1\"\n\n\
        [[kernel]]\ncu = \"c\"\nkernel = \"consumer\"\ndevice = \"fpga1\"\n\n\
        [[stream]]\nfrom = \"fpga0.p.out\"\nto = \"fpga1.c.in\"\n\n\
        [[stream]]\nfrom = \"fpga1.p.out\"\nto = \"fpga0.c.in\"\n";
    let desc = common::write(dir.path(), "duplex.toml", text);
    for dev in ["fpga0", "fpga1"] {
        let (cfg, _) = link(&desc, dev);
        let want = set(&[
            "nk=aurora_flow_0:1:aurora_flow_0",
            "nk=producer:1:p",
            "nk=consumer:1:c",
            "slr=aurora_flow_0:SLR2",
            "sp=p.m_axi_gmem:HBM[0]",
            "sp=c.m_axi_gmem:HBM[1]",
            "stream_connect=p.out:aurora_flow_0.tx_axis",
            "stream_connect=aurora_flow_0.rx_axis:c.in",
        ]);
        assert_eq!(lines(&cfg), want, "{dev}:\n{cfg}");
    }
}

/// The report names every stream and the cable direction it takes.
#[test]
fn report_lists_the_streams() {
    let desc = common::deployment("pipe_2fpga");
    let dir = tempfile::tempdir().unwrap();
    let mut sims = Vec::new();
    for dev in ["fpga0", "fpga1"] {
        let (_, sim) = link(&desc, dev);
        sims.push(common::write(
            dir.path(),
            &format!("{dev}.sim.json"),
            &sim.to_string(),
        ));
    }
    let html = deploy_tool::commands::report_text(&desc, &common::platform(), None, &sims).unwrap();
    assert!(html.contains(
        "<tr class=\"stream\"><td>fpga0.producer_0.out</td><td>fpga1.consumer_0.in</td>\
         <td>cable fpga0:1 → fpga1:0</td></tr>"
    ));
    assert!(html.contains("<td>on fpga1 (stream_connect)</td>"));
    assert!(html.contains("producer_0 (hls)") && html.contains("consumer_1 (hls)"));
}
