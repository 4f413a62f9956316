//! A device's board comes from its platform file: by name among the files given, or by a
//! path relative to the devices JSON; totals and ports are the file's (AMD DS963, Table 1);
//! the old `kind` and an unknown board are refused naming what to write.

use crate::common;

use finn_partitioner::devices::{self, Boards};

fn devices_json(dir: &std::path::Path, platform: &str) -> std::path::PathBuf {
    let path = dir.join("devices.json");
    let text = format!(
        r#"{{"devices": [{{"name": "fpga0", "platform": "{platform}", "clk_mhz": 250}}]}}"#
    );
    std::fs::write(&path, text).unwrap();
    path
}

/// DS963 Table 1: 1,303,680 LUTs, 2,607,360 registers, 4,032 BRAM18, 960 URAM, 9,024 DSP;
/// two QSFP28 cages.
fn assert_u280(d: &devices::Device) {
    assert_eq!(d.total.lut, 1_303_680.0);
    assert_eq!(d.total.ff, 2_607_360.0);
    assert_eq!(d.total.bram18, 4032.0);
    assert_eq!(d.total.uram, 960.0);
    assert_eq!(d.total.dsp, 9024.0);
    assert_eq!(d.ports, 2);
}

#[test]
fn a_platform_name_is_looked_up_in_the_files_given() {
    let dir = tempfile::tempdir().unwrap();
    let json = devices_json(dir.path(), common::U280);
    let devs = devices::load_with(&json, &common::boards()).unwrap();
    assert_u280(&devs[0]);
    let e = format!(
        "{:#}",
        devices::load_with(&json, &Boards::default()).unwrap_err()
    );
    assert!(e.contains("is not one of the boards given (none)"), "{e}");
    assert!(e.contains("--platform"), "{e}");
}

#[test]
fn a_platform_path_is_relative_to_the_devices_json() {
    let dir = tempfile::tempdir().unwrap();
    let file = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../toolchains/fpga_platforms")
        .join(format!("{}.toml", common::U280));
    std::fs::copy(&file, dir.path().join(format!("{}.toml", common::U280))).unwrap();
    let json = devices_json(dir.path(), &format!("{}.toml", common::U280));
    let devs = devices::load_with(&json, &Boards::default()).unwrap();
    assert_u280(&devs[0]);
}

#[test]
fn kind_is_refused_naming_platform() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("devices.json");
    std::fs::write(
        &path,
        r#"{"devices": [{"name": "fpga0", "kind": "U280", "clk_mhz": 250}]}"#,
    )
    .unwrap();
    let e = format!(
        "{:#}",
        devices::load_with(&path, &common::boards()).unwrap_err()
    );
    assert!(e.contains("device fpga0: kind = \"U280\" is gone"), "{e}");
    assert!(e.contains("\"platform\""), "{e}");
}
