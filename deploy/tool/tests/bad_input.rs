//! Every bad input of the deployment graph fails before anything is written, with the file and
//! line (or the device, stream and kernel port) in the message.

use crate::common;

use std::path::{Path, PathBuf};

use deploy_tool::commands::{self, link_config_text, LinkConfigArgs};

const HEAD: &str = "name = \"bad\"\nplatform = \"xilinx_u280_gen3x16_xdma_1_202211_1\"\n";

fn two_bench(extra_dev0: &str, cabling: &str) -> String {
    format!(
        "{HEAD}app = \"aurora_bench\"\n\n[[device]]\nname = \"fpga0\"\nnode = 0\ncard = 0\n\
         role = \"bench\"\n{extra_dev0}\n[[device]]\nname = \"fpga1\"\nnode = 0\ncard = 1\n\
         role = \"bench\"\n\n{cabling}"
    )
}

fn two_finn(extra_dev0: &str, cabling: &str) -> String {
    format!(
        "{HEAD}app = \"finn\"\nclock_mhz = 250\n\n[[device]]\nname = \"fpga0\"\nnode = 0\n\
         card = 0\n{extra_dev0}\n[[device]]\nname = \"fpga1\"\nnode = 0\ncard = 1\n\n{cabling}"
    )
}

/// 1-based line of the first line of `text` containing `marker` (the reference for the
/// line the error must name).
fn line_of(text: &str, marker: &str) -> usize {
    text.lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no {marker:?}"))
        + 1
}

struct Case {
    _dir: tempfile::TempDir,
    path: PathBuf,
    text: String,
}

fn case(text: String) -> Case {
    let dir = tempfile::tempdir().unwrap();
    let path = common::write(dir.path(), "bad.toml", &text);
    Case {
        _dir: dir,
        path,
        text,
    }
}

fn assert_at(err: anyhow::Error, c: &Case, marker: &str, words: &[&str]) {
    let msg = format!("{err:#}");
    let at = format!("{}:{}:", c.path.display(), line_of(&c.text, marker));
    assert!(msg.starts_with(&at), "expected {at} in: {msg}");
    for w in words {
        assert!(msg.contains(w), "expected {w:?} in: {msg}");
    }
}

fn link(
    c: &Case,
    device: &str,
    kernels: &[PathBuf],
    plan: Option<&Path>,
    fc: Option<&Path>,
) -> anyhow::Result<String> {
    let plat = common::platform();
    link_config_text(&LinkConfigArgs {
        deployment: &c.path,
        platform: &plat,
        device,
        kernels,
        plan,
        flow_control: fc,
        finn_model: None,
        cfg_out: Path::new("x.cfg"),
        sim_out: Path::new("x.json"),
    })
    .map(|(cfg, _, _)| cfg)
}

fn load(c: &Case) -> anyhow::Result<()> {
    commands::load(&c.path, &common::platform()).map(|_| ())
}

#[test]
fn port_used_twice() {
    let c = case(two_bench(
        "",
        "[[link]]\na = \"fpga0:1\"\nb = \"fpga1:0\"\n\n[[link]]\na = \"fpga0:1\"\nb = \"fpga1:1\"\n",
    ));
    // the second link is the one that reuses the port
    let second = c.text.rfind("[[link]]").unwrap();
    let line = c.text[..second].lines().count() + 1;
    let msg = format!("{:#}", load(&c).unwrap_err());
    assert!(
        msg.starts_with(&format!("{}:{line}:", c.path.display())),
        "{msg}"
    );
    assert!(msg.contains("port fpga0:1 is used twice"), "{msg}");
    assert!(
        msg.contains(&format!("line {}", line_of(&c.text, "[[link]]"))),
        "{msg}"
    );
}

#[test]
fn link_to_a_missing_device() {
    let c = case(two_bench(
        "",
        "[[link]]\na = \"fpga0:1\"\nb = \"fpga7:0\"\n",
    ));
    assert_at(
        load(&c).unwrap_err(),
        &c,
        "[[link]]",
        &["fpga7", "not in the deployment"],
    );
}

#[test]
fn port_the_platform_lacks() {
    let c = case(two_bench(
        "",
        "[[link]]\na = \"fpga0:2\"\nb = \"fpga1:0\"\n",
    ));
    assert_at(
        load(&c).unwrap_err(),
        &c,
        "[[link]]",
        &["QSFP ports [0, 1]", "not 2"],
    );
}

#[test]
fn unknown_platform() {
    let c = case(two_bench("", "[topology]\nkind = \"pair\"\n").replace(
        "xilinx_u280_gen3x16_xdma_1_202211_1",
        "xilinx_u250_gen3x16_xdma_4_1_202210_1",
    ));
    assert_at(
        load(&c).unwrap_err(),
        &c,
        "platform =",
        &["not known", "xilinx_u280_gen3x16_xdma_1_202211_1"],
    );
}

#[test]
fn unknown_key() {
    let c = case(two_bench(
        "colour = \"red\"\n",
        "[topology]\nkind = \"pair\"\n",
    ));
    assert_at(
        load(&c).unwrap_err(),
        &c,
        "colour",
        &["unknown field `colour`"],
    );
}

#[test]
fn unknown_published_figures() {
    let text = two_finn("", "").replace(
        "clock_mhz = 250\n",
        "clock_mhz = 250\nbeside = \"finn_examples_vgg\"\n",
    );
    let c = case(text);
    let err = load(&c).unwrap_err();
    assert_at(
        err,
        &c,
        "beside =",
        &[
            "finn_examples_vgg",
            "paper_mobilenet, finn_examples_resnet50",
        ],
    );
}

#[test]
fn cards_per_node_exceeded() {
    let c = case(two_bench("", "[topology]\nkind = \"pair\"\n").replace("card = 1", "card = 3"));
    assert_at(
        load(&c).unwrap_err(),
        &c,
        "card = 3",
        &["exceeds the 3 cards per node"],
    );
}

#[test]
fn devices_differ_from_the_target() {
    let c = case(two_bench("", "[topology]\nkind = \"pair\"\n"));
    let err = commands::check(
        &c.path,
        &common::platform(),
        &commands::Target {
            name: None,
            devices: &["fpga0".into(), "fpga2".into()],
        },
        None,
        None,
    )
    .unwrap_err();
    assert_at(
        err,
        &c,
        "name = \"fpga0\"",
        &["[fpga0, fpga1]", "[fpga0, fpga2]"],
    );
}

#[test]
fn cut_without_a_cable() {
    // A plan made for other cables: it cuts fpga0 -> fpga1, but the description (three cards,
    // fpga0 - fpga2 - fpga1) has no cable between those two.
    let c = case(format!(
        "{HEAD}app = \"finn\"\n\n[[device]]\nname = \"fpga0\"\nnode = 0\ncard = 0\n\n\
         [[device]]\nname = \"fpga1\"\nnode = 0\ncard = 1\n\n[[device]]\nname = \"fpga2\"\n\
         node = 0\ncard = 2\n\n[[link]]\na = \"fpga0:1\"\nb = \"fpga2:0\"\n\n[[link]]\n\
         a = \"fpga2:1\"\nb = \"fpga1:0\"\n"
    ));
    let dir = tempfile::tempdir().unwrap();
    let mut plan: serde_json::Value = common::plan_json();
    plan["devices"]
        .as_array_mut()
        .unwrap()
        .push(serde_json::json!({"name": "fpga2", "layers": ["x"]}));
    let plan = common::write(dir.path(), "plan.json", &plan.to_string());
    let cut = common::plan_cut();
    let err = link(&c, "fpga0", &common::all_kernels(), Some(&plan), None).unwrap_err();
    assert_at(
        err,
        &c,
        "[[link]]",
        &[&format!("cut {cut}"), "no cable between fpga0 and fpga1"],
    );
    // `check --plan` finds it before any link config is made
    let devices = ["fpga0", "fpga1", "fpga2"].map(String::from);
    let err = commands::check(
        &c.path,
        &common::platform(),
        &commands::Target {
            name: None,
            devices: &devices,
        },
        Some(&plan),
        None,
    )
    .unwrap_err();
    assert_at(err, &c, "[[link]]", &["no cable between fpga0 and fpga1"]);
}

#[test]
fn hbm_bank_the_platform_lacks() {
    let c = case(two_bench(
        "memory = { \"send_0.m_axi_gmem\" = \"HBM[32]\" }\n",
        "[topology]\nkind = \"pair\"\n",
    ));
    let err = link(&c, "fpga0", &common::all_kernels(), None, None).unwrap_err();
    assert_at(err, &c, "HBM[32]", &["HBM[0..31]", "not HBM[32]"]);
}

#[test]
fn slr_the_platform_lacks() {
    let c = case(two_bench(
        "slr = { recv_1 = \"SLR3\" }\n",
        "[topology]\nkind = \"pair\"\n",
    ));
    let err = link(&c, "fpga0", &common::all_kernels(), None, None).unwrap_err();
    assert_at(err, &c, "SLR3", &["SLR0, SLR1, SLR2", "not SLR3"]);
}

#[test]
fn over_budget() {
    // a BRAM budget of half what the plan puts to use on fpga0
    let plan: serde_json::Value = common::plan_json();
    let used = plan["devices"][0]["utilization"]["BRAM_18K"]
        .as_f64()
        .unwrap();
    let budget = (used * 50.0).floor() / 100.0;
    assert!(budget > 0.0, "the plan uses {used} of fpga0's BRAM");
    let c = case(two_finn(
        &format!("max_util = {{ BRAM_18K = {budget} }}\n"),
        "[topology]\nkind = \"chain\"\n",
    ));
    let err = link(
        &c,
        "fpga0",
        &common::all_kernels(),
        Some(&common::plan()),
        None,
    )
    .unwrap_err();
    let over = format!("{:.1} %", used * 100.0);
    let cap = format!("budget of {:.1} %", budget * 100.0);
    assert_at(err, &c, "max_util", &["BRAM_18K", &over, &cap]);
}

#[test]
fn stream_width_mismatch_names_the_stream_and_ports() {
    let c = case(two_bench("", "[topology]\nkind = \"pair\"\n"));
    let dir = tempfile::tempdir().unwrap();
    let send = std::fs::read_to_string(common::kernel("send")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&send).unwrap();
    for p in v["ports"].as_array_mut().unwrap() {
        if p["name"] == "data_output" {
            p["width"] = 500.into();
        }
    }
    let bad = common::write(dir.path(), "send.json", &v.to_string());
    let mut kernels = common::all_kernels();
    kernels.retain(|k| !k.ends_with("send.json"));
    kernels.push(bad);
    let msg = format!("{:#}", link(&c, "fpga0", &kernels, None, None).unwrap_err());
    assert!(
        msg.contains("device fpga0: stream send_0.data_output -> aurora_flow_0.tx_axis"),
        "{msg}"
    );
    assert!(
        msg.contains("500 bits") && msg.contains("512 bits"),
        "{msg}"
    );
}

#[test]
fn rx_headroom_below_the_cables_inflight_data() {
    let c = case(two_bench("", "[topology]\nkind = \"pair\"\ncable_m = 5\n"));
    let dir = tempfile::tempdir().unwrap();
    // hw/aurora_flow/kernel.toml: 32 B beats, 128 + 4 per metre
    let fc = common::kernel_toml();
    let text = std::fs::read_to_string(common::kernel("aurora_flow_0")).unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&text).unwrap();
    // 64 words x 64 B / 32 B = 128 link beats < 128 + 4 x 5 m
    v["params"]["rx_headroom_words"] = 64.into();
    let af0 = common::write(dir.path(), "aurora_flow_0.json", &v.to_string());
    let mut kernels = common::all_kernels();
    kernels.retain(|k| !k.ends_with("aurora_flow_0.json"));
    kernels.push(af0);
    let err = link(&c, "fpga0", &kernels, None, Some(&fc)).unwrap_err();
    assert_at(
        err,
        &c,
        "kind = \"pair\"",
        &["holds 128 link beats", "148 are in flight"],
    );
    // the same cable with the kernel's default headroom (512 words = 1024 beats) passes
    assert!(link(&c, "fpga0", &common::all_kernels(), None, Some(&fc)).is_ok());
}

#[test]
fn the_binary_exits_1_and_writes_nothing() {
    let c = case(two_bench(
        "",
        "[[link]]\na = \"fpga0:1\"\nb = \"fpga7:0\"\n",
    ));
    let out = tempfile::tempdir().unwrap();
    let cfg = out.path().join("fpga0.cfg");
    let sim = out.path().join("fpga0.sim.json");
    let plat = common::platform();
    let mut args: Vec<String> = vec![
        "link-config".into(),
        "--deployment".into(),
        c.path.display().to_string(),
        "--platform".into(),
        plat.display().to_string(),
        "--device".into(),
        "fpga0".into(),
        "--cfg-out".into(),
        cfg.display().to_string(),
        "--sim-out".into(),
        sim.display().to_string(),
        "--kernel".into(),
    ];
    args.extend(
        common::all_kernels()
            .iter()
            .map(|k| k.display().to_string()),
    );
    let r = common::tool(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(r.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&r.stderr);
    let at = format!(
        "error: {}:{}:",
        c.path.display(),
        line_of(&c.text, "[[link]]")
    );
    assert!(stderr.starts_with(&at), "{stderr}");
    assert_eq!(
        std::fs::read_dir(out.path()).unwrap().count(),
        0,
        "something was written"
    );
}

/// `check` through the binary with a stamp: returns stderr and asserts exit 1, no stamp.
fn check_refused(c: &Case, devices: &str) -> String {
    let out = tempfile::tempdir().unwrap();
    let stamp = out.path().join("checked.txt");
    let plat = common::platform();
    let r = common::tool(&[
        "check",
        "--deployment",
        &c.path.display().to_string(),
        "--platform",
        &plat.display().to_string(),
        "--devices",
        devices,
        "--stamp",
        &stamp.display().to_string(),
    ]);
    assert_eq!(r.status.code(), Some(1));
    assert_eq!(
        std::fs::read_dir(out.path()).unwrap().count(),
        0,
        "something was written"
    );
    String::from_utf8_lossy(&r.stderr).into_owned()
}

/// A two-card FINN deployment whose only cable loops fpga0's ports: the partitioner could
/// not cut, fpga1 would get no layers and its build would fail deep inside; the description
/// is refused at its cabling, naming the idle card and its line.
#[test]
fn finn_card_without_a_cable_to_the_pipeline() {
    let c = case(two_finn("", "[[link]]\na = \"fpga0:0\"\nb = \"fpga0:1\"\n"));
    let idle = format!("fpga1 (line {})", line_of(&c.text, "name = \"fpga1\""));
    let words = [
        "through fpga0 only (a loopback on one card carries no cut)",
        idle.as_str(),
        "no layers",
        "kind = \"chain\"",
    ];
    assert_at(load(&c).unwrap_err(), &c, "[[link]]", &words);
    let stderr = check_refused(&c, "fpga0,fpga1");
    let at = format!(
        "error: {}:{}:",
        c.path.display(),
        line_of(&c.text, "[[link]]")
    );
    assert!(stderr.starts_with(&at), "{stderr}");
    // the same through [topology]: both cards looped, the error at the kind's line
    let c = case(two_finn("", "[topology]\nkind = \"loopback\"\n"));
    let idle = format!("fpga1 (line {})", line_of(&c.text, "name = \"fpga1\""));
    let words = [idle.as_str(), "no layers", "kind = \"chain\""];
    assert_at(load(&c).unwrap_err(), &c, "kind = \"loopback\"", &words);
    // the same cards with a cable between them are accepted
    let fixed = case(two_finn("", "[[link]]\na = \"fpga0:1\"\nb = \"fpga1:0\"\n"));
    load(&fixed).expect("a cable between the cards");
}

/// Three cards where the cables reach fpga1 only: the error proposes a cable between free
/// ports, and the description with that cable added is accepted.
#[test]
fn finn_card_off_the_path_gets_a_cable_proposed() {
    let text = format!(
        "{HEAD}app = \"finn\"\n\n[[device]]\nname = \"fpga0\"\nnode = 0\ncard = 0\n\n\
         [[device]]\nname = \"fpga1\"\nnode = 0\ncard = 1\n\n[[device]]\nname = \"fpga2\"\n\
         node = 0\ncard = 2\n\n[[link]]\na = \"fpga0:1\"\nb = \"fpga1:0\"\n"
    );
    let c = case(text.clone());
    let idle = format!("fpga2 (line {})", line_of(&c.text, "name = \"fpga2\""));
    let proposal = "[[link]] a = \"fpga1:1\", b = \"fpga2:0\"";
    assert_at(
        load(&c).unwrap_err(),
        &c,
        "[[link]]",
        &["through fpga0 -> fpga1 only", idle.as_str(), proposal],
    );
    let fixed = case(text + "\n[[link]]\na = \"fpga1:1\"\nb = \"fpga2:0\"\n");
    load(&fixed).expect("the proposed cable joins the chain");
    // the pipeline starts on the first device: a chain with fpga0 in its middle leaves one
    // end unreachable whichever way the network runs
    let middle = case(
        c.text.replace(
            "a = \"fpga0:1\"\nb = \"fpga1:0\"",
            "a = \"fpga1:1\"\nb = \"fpga0:0\"",
        ) + "\n[[link]]\na = \"fpga0:1\"\nb = \"fpga2:0\"\n",
    );
    assert_at(
        load(&middle).unwrap_err(),
        &middle,
        "[[link]]",
        &["no layers"],
    );
}

/// A byte that is not UTF-8 (Latin-1 `é` in a comment) is named with its line, column,
/// value and offset, and nothing is written.
#[test]
fn description_not_utf8() {
    let marker = "# caf\u{e9} au lait";
    let text = two_finn("", &format!("{marker}\n[topology]\nkind = \"chain\"\n"));
    let line = line_of(&text, marker);
    let col = text.lines().nth(line - 1).unwrap().find('\u{e9}').unwrap() + 1;
    // Latin-1: é is the single byte 0xE9
    let bytes: Vec<u8> = text
        .chars()
        .map(|ch| u8::try_from(u32::from(ch)).unwrap())
        .collect();
    let offset = bytes.iter().position(|&b| b == 0xe9).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, &bytes).unwrap();
    let c = Case {
        _dir: dir,
        path,
        text,
    };
    let msg = format!("{:#}", load(&c).unwrap_err());
    let want = format!(
        "{}:{line}:{col}: not UTF-8 (byte 0xe9 at offset {offset})",
        c.path.display()
    );
    assert!(msg.starts_with(&want), "expected {want} in: {msg}");
    let stderr = check_refused(&c, "fpga0,fpga1");
    assert!(stderr.starts_with(&format!("error: {want}")), "{stderr}");
}

/// A plan that leaves a card without layers (min-cut keeps a network that fits on one card
/// whole) is refused at that device's line by every reader of the whole plan, and by the
/// link step of that device's slice; the other device's slice still links.
#[test]
fn a_plan_that_leaves_a_card_idle() {
    let mut plan = common::plan_json();
    let all: Vec<serde_json::Value> = plan["layers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["name"].clone())
        .collect();
    plan["devices"][0]["layers"] = all.into();
    plan["devices"][1]["layers"] = serde_json::json!([]);
    for l in plan["layers"].as_array_mut().unwrap() {
        l["device"] = "fpga0".into();
    }
    plan["cuts"] = serde_json::json!([]);
    let dir = tempfile::tempdir().unwrap();
    let whole = common::write(dir.path(), "plan.json", &plan.to_string());
    let c = case(two_finn("", "[topology]\nkind = \"chain\"\n"));
    let devices = ["fpga0", "fpga1"].map(String::from);
    let target = commands::Target {
        name: None,
        devices: &devices,
    };
    let words = ["device fpga1", "places no layer on it", "min_util"];
    let err = commands::check(&c.path, &common::platform(), &target, Some(&whole), None);
    assert_at(err.unwrap_err(), &c, "name = \"fpga1\"", &words);
    let err = link(&c, "fpga0", &common::all_kernels(), Some(&whole), None).unwrap_err();
    assert_at(err, &c, "name = \"fpga1\"", &words);
    let slice = |device: &str| {
        let out = dir.path().join(format!("{device}.json"));
        commands::plan_slice(&whole, device, &out).unwrap();
        out
    };
    let err = link(
        &c,
        "fpga1",
        &common::all_kernels(),
        Some(&slice("fpga1")),
        None,
    );
    assert_at(err.unwrap_err(), &c, "name = \"fpga1\"", &words);
    link(
        &c,
        "fpga0",
        &common::all_kernels(),
        Some(&slice("fpga0")),
        None,
    )
    .expect("fpga0's slice has its layers");
}

/// A board that has a file, but not the one the target is built for: every card of a
/// deployment is one board, and the message says where the target's board is set.
#[test]
fn another_board_than_the_targets() {
    let c = case(two_bench("", "[topology]\nkind = \"pair\"\n").replace(
        "xilinx_u280_gen3x16_xdma_1_202211_1",
        "xilinx_u55c_gen3x16_xdma_3_202210_1",
    ));
    assert_at(
        load(&c).unwrap_err(),
        &c,
        "platform =",
        &["not the board this target is built for", "deploy/BUCK"],
    );
}

/// Two boards in one deployment: a card cannot name a board of its own (one `platform` per
/// description), refused at the card's key.
#[test]
fn a_second_board_in_one_deployment() {
    let c = case(two_bench(
        "platform = \"xilinx_u55c_gen3x16_xdma_3_202210_1\"\n",
        "[topology]\nkind = \"pair\"\n",
    ));
    let err = load(&c).unwrap_err();
    let msg = format!("{err:#}");
    let at = format!(
        "{}:{}:",
        c.path.display(),
        line_of(&c.text, "platform = \"xilinx_u55c")
    );
    assert!(msg.starts_with(&at), "expected {at} in: {msg}");
}
