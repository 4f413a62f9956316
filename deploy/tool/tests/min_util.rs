//! `min_util`, the partitioner's lower bound per device, from the description: written into
//! devices.json as the partitioner reads it, and refused at its line where it cannot hold.

use crate::common;

use deploy_tool::{commands, partitioner};

const HEAD: &str = "name = \"floors\"\nplatform = \"xilinx_u280_gen3x16_xdma_1_202211_1\"\n\
                    app = \"finn\"\n\n";

fn two_cards(dev1: &str) -> String {
    format!(
        "{HEAD}[[device]]\nname = \"fpga0\"\nnode = 0\ncard = 0\n\n[[device]]\nname = \
         \"fpga1\"\nnode = 0\ncard = 1\n{dev1}\n[topology]\nkind = \"chain\"\n"
    )
}

/// The description's devices as the partitioner resolves them from devices.json.
fn resolved(text: &str) -> anyhow::Result<Vec<finn_partitioner::devices::Device>> {
    let dir = tempfile::tempdir().unwrap();
    let path = common::write(dir.path(), "floors.toml", text);
    let (dep, plat) = commands::load(&path, &common::platform())?;
    let json = common::write(
        dir.path(),
        "devices.json",
        &partitioner::devices_json(&dep, &plat).to_string(),
    );
    Ok(finn_partitioner::devices::load(&json).expect("the partitioner reads devices.json"))
}

/// The platform's own count of a resource: the sum of its [slr.*] tables, read here as plain
/// TOML (not through the reader under test).
fn platform_total(resource: &str) -> f64 {
    let text = std::fs::read_to_string(common::platform()).unwrap();
    let v: toml::Value = toml::from_str(&text).unwrap();
    let slrs = v["slr"].as_table().expect("[slr.*] tables");
    slrs.values()
        .map(|t| {
            let n = &t[resource];
            n.as_float().or(n.as_integer().map(|i| i as f64)).unwrap()
        })
        .sum()
}

#[test]
fn the_partitioner_gets_each_devices_floor() {
    let devs = resolved(&two_cards("min_util = { LUT = 0.3, DSP = 0.1 }\n")).unwrap();
    assert_eq!(devs[1].floor.lut, 0.3 * platform_total("LUT"));
    assert_eq!(devs[1].floor.dsp, 0.1 * platform_total("DSP"));
    assert_eq!(devs[1].floor.bram18, 0.0);
    // fpga0 gave none
    assert_eq!(devs[0].floor.lut, 0.0);
    assert_eq!(devs[0].floor.dsp, 0.0);
}

#[test]
fn without_floors_devices_json_is_as_before() {
    let dir = tempfile::tempdir().unwrap();
    let path = common::write(dir.path(), "floors.toml", &two_cards(""));
    let (dep, plat) = commands::load(&path, &common::platform()).unwrap();
    let json = partitioner::devices_json(&dep, &plat);
    for d in json["devices"].as_array().unwrap() {
        assert!(d.get("min_util").is_none(), "{d}");
    }
}

fn refused(dev1: &str, words: &[&str]) {
    let text = two_cards(dev1);
    let err = format!("{:#}", resolved(&text).unwrap_err());
    let line = text
        .lines()
        .position(|l| l.starts_with("min_util"))
        .unwrap()
        + 1;
    assert!(
        err.contains(&format!("floors.toml:{line}: ")),
        "line {line}: {err}"
    );
    for w in words {
        assert!(err.contains(w), "{w:?} in {err}");
    }
}

#[test]
fn a_floor_above_the_cap_is_refused_at_its_line() {
    refused(
        "max_util = { LUT = 0.5 }\nmin_util = { LUT = 0.6 }\n",
        &["device fpga1", "min_util LUT = 0.6", "max_util LUT = 0.5"],
    );
    // above the default cap of 0.8 as well
    refused(
        "min_util = { BRAM_18K = 0.9 }\n",
        &["max_util BRAM_18K = 0.8"],
    );
}

#[test]
fn a_floor_that_is_no_fraction_or_no_resource_is_refused_at_its_line() {
    refused(
        "min_util = { LUT = 1.5 }\n",
        &["min_util LUT = 1.5 is not a fraction"],
    );
    refused("min_util = { CLB = 0.1 }\n", &["min_util names 'CLB'"]);
}

/// A plan made without the floor the description now sets is refused by link-config at the
/// floor's line: mobilenet_2fpga's plan (the partitioner's) with a LUT floor on fpga1 just
/// above what that plan gives it.
#[test]
fn a_plan_under_the_floor_is_refused_at_its_line() {
    let plan = common::plan();
    let used = common::plan_json()["devices"][1]["utilization"]["LUT"]
        .as_f64()
        .unwrap();
    let floor = ((used * 100.0).floor() + 1.0) / 100.0;
    assert!(floor <= 0.8, "fpga1 uses {used} of its LUTs");
    let text = std::fs::read_to_string(common::deployment("mobilenet_2fpga"))
        .unwrap()
        .replace(
            "name = \"fpga1\"\n",
            &format!("name = \"fpga1\"\nmin_util = {{ LUT = {floor} }}\n"),
        );
    let dir = tempfile::tempdir().unwrap();
    let path = common::write(dir.path(), "mobilenet_2fpga.toml", &text);
    let (kernels, platform) = (common::all_kernels(), common::platform());
    let link = |device| {
        commands::link_config_text(&commands::LinkConfigArgs {
            deployment: &path,
            platform: &platform,
            device,
            kernels: &kernels,
            plan: Some(&plan),
            flow_control: None,
            finn_model: None,
            cfg_out: std::path::Path::new("x.cfg"),
            sim_out: std::path::Path::new("x.json"),
        })
    };
    let msg = format!("{:#}", link("fpga1").unwrap_err());
    let line = text
        .lines()
        .position(|l| l.starts_with("min_util"))
        .unwrap()
        + 1;
    let want = [
        format!("mobilenet_2fpga.toml:{line}: device fpga1"),
        format!("uses {:.1} % of its LUT", used * 100.0),
        format!("floor (min_util) of {:.1} %", floor * 100.0),
    ];
    for w in &want {
        assert!(msg.contains(w.as_str()), "{w:?} in {msg}");
    }
    // fpga0 has no floor and links
    assert!(link("fpga0").is_ok());
}
