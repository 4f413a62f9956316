//! MobileNet-V1 on two cards: the partitioner's own parsers read the inputs made from the
//! deployment, and the link configs put DMAs, partitions and the cut where the plan says.

use crate::common;

use std::path::Path;

use deploy_tool::commands::{self, link_config_text, LinkConfigArgs};
use deploy_tool::{partitioner, plan::Plan};

fn link(device: &str) -> (String, serde_json::Value, Vec<String>) {
    let dep = common::deployment("mobilenet_2fpga");
    let plat = common::platform();
    let plan = common::plan();
    let kernels = common::all_kernels();
    let (cfg, sim, checked) = link_config_text(&LinkConfigArgs {
        deployment: &dep,
        platform: &plat,
        device,
        kernels: &kernels,
        plan: Some(&plan),
        flow_control: Some(&common::kernel_toml()),
        finn_model: Some("buck-out/x/partitions/fpga0"),
        cfg_out: Path::new("x.cfg"),
        sim_out: Path::new("x.json"),
    })
    .expect("links");
    (cfg, sim, checked.notes)
}

#[test]
fn partitioner_reads_the_inputs_and_its_cuts_land_on_cables() {
    let (dep, plat) =
        commands::load(&common::deployment("mobilenet_2fpga"), &common::platform()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let devices = common::write(
        dir.path(),
        "devices.json",
        &partitioner::devices_json(&dep, &plat).to_string(),
    );
    let topology = common::write(
        dir.path(),
        "topology.json",
        &partitioner::topology_json(&dep).to_string(),
    );
    let devs =
        finn_partitioner::devices::load(&devices).expect("the partitioner reads devices.json");
    assert_eq!(devs.len(), 2);
    assert_eq!(devs[0].total.lut, 1_303_680.0);
    assert_eq!(devs[1].ports, 2);
    let topo = finn_partitioner::topology::load(&topology).expect("and topology.json");
    // the partitioner's own check of the wiring against the device ports
    topo.layout(&devs).expect("a valid layout");
    // the committed plan was made from exactly these inputs; its cut has a cable
    let plan = Plan::load(&common::plan()).unwrap();
    let cuts = deploy_tool::plan::map_cuts(&dep, &plan).unwrap();
    assert_eq!(cuts.len(), plan.cuts.len());
    assert_eq!(cuts[0].from.to_string(), "fpga0:1");
    assert_eq!(cuts[0].to.to_string(), "fpga1:0");
}

#[test]
fn first_card_streams_from_the_input_dma_into_the_cable() {
    let (cfg, sim, notes) = link("fpga0");
    let conn = common::section(&cfg, "connectivity");
    for l in [
        "nk=dma_in:1:dma_in_0",
        "nk=finn_fpga0:1:finn_fpga0",
        "nk=aurora_flow_1:1:aurora_flow_1",
        "sp=dma_in_0.m_axi_gmem:HBM[0]",
        "stream_connect=dma_in_0.out:finn_fpga0.s_axis_0",
        "stream_connect=finn_fpga0.m_axis_0:aurora_flow_1.tx_axis",
        "connect=aurora_flow_1/gt_port:io_gt_qsfp1_00",
    ] {
        assert!(conn.contains(&l.to_string()), "no {l} in\n{cfg}");
    }
    assert!(!cfg.contains("dma_out"), "{cfg}");
    assert!(!cfg.contains("aurora_flow_0"), "{cfg}");
    // FINN's kernel: network input width (FMPadding_rtl_0, 24 bit) and the cut's width
    let plan: serde_json::Value = common::plan_json();
    let cut_bits = plan["cuts"][0]["stream_bits"].as_u64().unwrap();
    let in_bits = plan["layers"][0]["in_stream_bits"].as_u64().unwrap();
    let finn = sim["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["cu"] == "finn_fpga0")
        .unwrap();
    let width = |p: &str| {
        finn["ports"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["name"] == p)
            .unwrap()["width"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(width("s_axis_0"), in_bits.div_ceil(8) * 8);
    // the network input is FMPadding_rtl_0 taking SIMD channels of its inputDataType (UINT8)
    // per beat: the estimates FINN exported for this model say so
    let est: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            common::root().join("finn/partitioner/tests/data/mobilenet_v1_estimates.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let l0 = &est["layers"][0];
    assert_eq!(l0["attrs"]["inputDataType"], "UINT8");
    let simd = plan["layers"][0]["folding"]["SIMD"].as_u64().unwrap();
    assert_eq!(width("s_axis_0"), simd * 8);
    assert_eq!(width("m_axis_0"), cut_bits.div_ceil(8) * 8);
    assert_eq!(finn["params"]["first_layer"], plan["layers"][0]["name"]);
    assert_eq!(finn["model"], "buck-out/x/partitions/fpga0");
    // the 512-bit DMA stream meets the narrower partition input through a converter
    assert!(
        notes.iter().any(|n| n.contains("width converter 512 ->")),
        "{notes:?}"
    );
    let link = &sim["links"][0];
    assert_eq!(link["peer_device"], "fpga1");
    assert_eq!(link["tx_cut"]["from_layer"], plan["cuts"][0]["from_layer"]);
    assert_eq!(link["idle_rx"], true);
}

#[test]
fn last_card_receives_the_cut_and_writes_through_the_output_dma() {
    let (cfg, _, notes) = link("fpga1");
    let conn = common::section(&cfg, "connectivity");
    for l in [
        "nk=aurora_flow_0:1:aurora_flow_0",
        "nk=dma_out:1:dma_out_0",
        "slr=aurora_flow_0:SLR2",
        "sp=dma_out_0.m_axi_gmem:HBM[0]",
        "stream_connect=aurora_flow_0.rx_axis:finn_fpga1.s_axis_0",
        "stream_connect=finn_fpga1.m_axis_0:dma_out_0.in",
        "connect=io_clk_qsfp0_refclkb_00:aurora_flow_0/gt_refclk_0",
    ] {
        assert!(conn.contains(&l.to_string()), "no {l} in\n{cfg}");
    }
    // nothing goes back from the last card: a tie-off that sends nothing drives the link
    // kernel's send side (v++ rejects a dangling AXI-Stream input), as FINN+ 1.6.1's
    // `tx_dummy_kernel`
    for l in [
        "nk=tie_off_source:1:tie_off_source_0",
        "stream_connect=tie_off_source_0.out:aurora_flow_0.tx_axis",
    ] {
        assert!(conn.contains(&l.to_string()), "no {l} in\n{cfg}");
    }
    assert!(!cfg.contains("tie_off_sink"), "{cfg}");
    assert!(!notes.iter().any(|n| n.contains("tx_axis")), "{notes:?}");
}

/// finn-plus 1.6.1 InsertIODMA gives an output DMA gcd(padded width x words per frame, 512)
/// bits: the plan's last layer, LabelSelect, sends 5 words of 16 bits per frame, so 16.
#[test]
fn the_output_dma_has_insert_iodmas_width_and_no_converter() {
    let (cfg, sim, notes) = link("fpga1");
    let plan: serde_json::Value = common::plan_json();
    let last = &plan["layers"].as_array().unwrap().last().unwrap();
    let (bits, frame) = (
        last["out_stream_bits"].as_u64().unwrap(),
        last["out_bits_per_frame"].as_u64().unwrap(),
    );
    assert_eq!((bits, frame), (16, 80));
    // the v++ kernel is dma_out whichever width variant was built
    assert!(
        common::section(&cfg, "connectivity").contains(&"nk=dma_out:1:dma_out_0".to_string()),
        "{cfg}"
    );
    let dma = sim["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["cu"] == "dma_out_0")
        .unwrap();
    assert_eq!(dma["kernel"], "dma_out");
    assert_eq!(dma["payload"], "dma_out_w16");
    let stream = sim["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["to"] == "dma_out_0.in")
        .unwrap();
    assert_eq!(stream["converter"], serde_json::Value::Null, "{stream}");
    assert!(!notes.iter().any(|n| n.contains("dma_out_0")), "{notes:?}");
}

#[test]
fn without_a_dma_of_that_width_the_error_names_the_target_to_add() {
    let kernels: Vec<_> = common::all_kernels()
        .into_iter()
        .filter(|k| !k.ends_with("dma_out_w16.json"))
        .collect();
    let err = link_with("fpga1", &kernels, &common::plan())
        .expect_err("no 16-bit dma_out")
        .to_string();
    for want in [
        "`dma_out`",
        "16-bit",
        "InsertIODMA",
        "//hw/hls:dma_out_w16",
        "dma_out (512 bits)",
    ] {
        assert!(err.contains(want), "no {want:?} in: {err}");
    }
}

/// A cut whose frame is not a whole number of the link's 512-bit words would leave the
/// last bytes of a run in the converter in front of the link kernel: refused, naming the
/// stream and both widths.
#[test]
fn a_cut_that_would_leave_a_partial_link_word_is_refused() {
    let mut plan: serde_json::Value = common::plan_json();
    // a cut of 257 words of 32 bits: 1028 B per frame, 4 B past 16 link words of 64 B
    plan["cuts"][0]["stream_bits"] = serde_json::json!(32);
    plan["cuts"][0]["bits_per_frame"] = serde_json::json!(257 * 32);
    let dir = tempfile::tempdir().unwrap();
    let path = common::write(dir.path(), "plan.json", &plan.to_string());
    let err = link_with("fpga0", &common::all_kernels(), &path)
        .expect_err("a partial link word")
        .to_string();
    for want in [
        "finn_fpga0.m_axis_0 -> aurora_flow_1.tx_axis",
        "32 -> 512 bits",
        "1028 B",
        "holds 4 B",
    ] {
        assert!(err.contains(want), "no {want:?} in: {err}");
    }
}

fn link_with(
    device: &str,
    kernels: &[std::path::PathBuf],
    plan: &Path,
) -> anyhow::Result<(String, serde_json::Value, deploy_tool::validate::Checked)> {
    link_config_text(&LinkConfigArgs {
        deployment: &common::deployment("mobilenet_2fpga"),
        platform: &common::platform(),
        device,
        kernels,
        plan: Some(plan),
        flow_control: Some(&common::kernel_toml()),
        finn_model: None,
        cfg_out: Path::new("x.cfg"),
        sim_out: Path::new("x.json"),
    })
}

#[test]
fn first_card_drains_the_unused_receive_direction_into_a_counting_sink() {
    let (cfg, sim, notes) = link("fpga0");
    let conn = common::section(&cfg, "connectivity");
    for l in [
        "nk=tie_off_sink:1:tie_off_sink_1",
        "stream_connect=aurora_flow_1.rx_axis:tie_off_sink_1.in",
        // its count word after the input DMA's buffer
        "sp=tie_off_sink_1.m_axi_gmem:HBM[1]",
    ] {
        assert!(conn.contains(&l.to_string()), "no {l} in\n{cfg}");
    }
    assert!(!cfg.contains("tie_off_source"), "{cfg}");
    assert!(
        !notes
            .iter()
            .any(|n| n.contains("aurora_flow_1.rx_axis is not read")),
        "{notes:?}"
    );
    let cus: Vec<&str> = sim["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["cu"].as_str().unwrap())
        .collect();
    assert!(cus.contains(&"tie_off_sink_1"), "{cus:?}");
}

#[test]
fn without_the_tie_off_kernel_the_open_link_input_is_an_error() {
    let dep = common::deployment("mobilenet_2fpga");
    let plat = common::platform();
    let plan = common::plan();
    let kernels: Vec<_> = common::all_kernels()
        .into_iter()
        .filter(|k| !k.ends_with("tie_off_source.json"))
        .collect();
    let err = link_config_text(&LinkConfigArgs {
        deployment: &dep,
        platform: &plat,
        device: "fpga1",
        kernels: &kernels,
        plan: Some(&plan),
        flow_control: Some(&common::kernel_toml()),
        finn_model: None,
        cfg_out: Path::new("x.cfg"),
        sim_out: Path::new("x.json"),
    })
    .expect_err("a link kernel input without a driver")
    .to_string();
    assert!(
        err.contains("'tie_off_source'") && err.contains("unused tx_axis of aurora_flow_0"),
        "{err}"
    );
}

/// The command lines the deployment rules run, end to end through the binary.
#[test]
fn every_subcommand_through_the_binary() {
    let out = tempfile::tempdir().unwrap();
    let o = |name: &str| out.path().join(name).display().to_string();
    let dep = common::deployment("mobilenet_2fpga").display().to_string();
    let plat = common::platform().display().to_string();
    let plan_file = common::plan();
    let plan = plan_file.display().to_string();
    let ktoml = common::kernel_toml().display().to_string();
    let ok = |args: Vec<String>| {
        let r = common::tool(&args.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(
            r.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&r.stderr)
        );
    };
    let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    ok(s(&[
        "check",
        "--deployment",
        &dep,
        "--platform",
        &plat,
        "--devices",
        "fpga0,fpga1",
    ]));
    ok(s(&[
        "partitioner-inputs",
        "--deployment",
        &dep,
        "--platform",
        &plat,
        "--devices-out",
        &o("devices.json"),
        "--topology-out",
        &o("ptopology.json"),
    ]));
    for dev in ["fpga0", "fpga1"] {
        let mut a = s(&[
            "link-config",
            "--deployment",
            &dep,
            "--platform",
            &plat,
            "--device",
            dev,
            "--plan",
            &plan,
            "--flow-control",
            &ktoml,
            "--cfg-out",
            &o(&format!("{dev}.cfg")),
            "--sim-out",
            &o(&format!("{dev}.sim.json")),
            "--kernel",
        ]);
        a.extend(
            common::all_kernels()
                .iter()
                .map(|k| k.display().to_string()),
        );
        ok(a);
    }
    ok(s(&[
        "scripts",
        "--deployment",
        &dep,
        "--platform",
        &plat,
        "--cluster",
        &common::cluster("noctua2").display().to_string(),
        "--xclbin",
        "fpga0=x/fpga0.xclbin",
        "fpga1=x/fpga1.xclbin",
        "--host",
        "x/host",
        "--plan",
        &plan,
        "--job-out",
        &o("job.sh"),
        "--run-out",
        &o("run.sh"),
        "--topology-out",
        &o("topology.json"),
    ]));
    ok(s(&[
        "report",
        "--deployment",
        &dep,
        "--platform",
        &plat,
        "--plan",
        &plan,
        "--sim",
        &o("fpga0.sim.json"),
        &o("fpga1.sim.json"),
        "--out",
        &o("report.html"),
    ]));
    let topo: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(o("topology.json")).unwrap()).unwrap();
    let plan_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&plan).unwrap()).unwrap();
    assert_eq!(
        topo["links"][0]["cut"]["from_layer"],
        plan_json["cuts"][0]["from_layer"]
    );
    assert_eq!(topo["links"][0]["fpgalink"], "n00:acl0:ch1-n00:acl1:ch0");
    let job = std::fs::read_to_string(o("job.sh")).unwrap();
    assert!(
        job.contains("--fpgalink=n00:acl0:ch1-n00:acl1:ch0"),
        "{job}"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(o("run.sh")).unwrap().permissions().mode();
    assert_eq!(mode & 0o111, 0o111);
    // nothing but the outputs (no temporary files left behind)
    let mut names: Vec<String> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "devices.json",
            "fpga0.cfg",
            "fpga0.sim.json",
            "fpga1.cfg",
            "fpga1.sim.json",
            "job.sh",
            "ptopology.json",
            "report.html",
            "run.sh",
            "topology.json"
        ]
    );
}
