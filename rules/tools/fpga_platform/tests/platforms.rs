//! The platform files through their one reader: the totals against the data sheets' figures,
//! the generated Starlark module against the checked-in one, and what a broken file gets.

use std::path::PathBuf;

use fpga_platform::Platform;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../..")
}

fn platforms_dir() -> PathBuf {
    root().join("toolchains/fpga_platforms")
}

const U280: &str = "xilinx_u280_gen3x16_xdma_1_202211_1";
const U55C: &str = "xilinx_u55c_gen3x16_xdma_3_202210_1";

/// AMD DS963 (U280) and DS978 (U55C), Table 1: 1,303,680 LUTs, 2,607,360 registers, 2,016
/// 36 Kb block RAMs (4,032 BRAM18), 960 UltraRAMs, 9,024 DSP slices on both cards.
#[test]
fn totals_are_the_data_sheets() {
    for name in [U280, U55C] {
        let p = Platform::load(&platforms_dir().join(format!("{name}.toml"))).unwrap();
        assert_eq!(p.resources["LUT"], 1_303_680.0, "{name}");
        assert_eq!(p.resources["FF"], 2_607_360.0, "{name}");
        assert_eq!(p.resources["BRAM_18K"], 2.0 * 2016.0, "{name}");
        assert_eq!(p.resources["URAM"], 960.0, "{name}");
        assert_eq!(p.resources["DSP"], 9024.0, "{name}");
        assert_eq!(p.slrs, ["SLR0", "SLR1", "SLR2"], "{name}");
        assert_eq!(p.ports(), [0, 1], "{name}: 2 x QSFP28");
    }
}

/// DS963: 8 GB HBM2 in 32 pseudo-channels and 2 x 16 GB DDR4; DS978: 16 GB HBM2, no DDR.
#[test]
fn memories_are_the_data_sheets() {
    let u280 = Platform::load(&platforms_dir().join(format!("{U280}.toml"))).unwrap();
    let hbm = u280.memory["HBM"] as u64 * u280.bank_size("HBM").unwrap();
    assert_eq!(hbm, 8 << 30);
    assert_eq!(
        u280.memory["DDR"] as u64 * u280.bank_size("DDR").unwrap(),
        32 << 30
    );
    let u55c = Platform::load(&platforms_dir().join(format!("{U55C}.toml"))).unwrap();
    assert_eq!(
        u55c.memory["HBM"] as u64 * u55c.bank_size("HBM").unwrap(),
        16 << 30
    );
    assert_eq!(u55c.bank_size("DDR"), None);
    assert!(u55c
        .check_bank("DDR[0]")
        .unwrap_err()
        .contains("has no DDR memory"));
    assert!(u55c.check_bank("HBM[31]").is_ok());
    // PG276 (AXI HBM Controller v1.0) address map: the AXI port (pseudo-channel) is address
    // bits 31:28 on a 4H device (U280, 8 GB), bits 32:29 on an 8H device (U55C, 16 GB)
    assert_eq!(u280.bank_address("HBM", 3), Some(3 << 28));
    assert_eq!(u55c.bank_address("HBM", 3), Some(3 << 29));
    assert_eq!(u280.bank_address("HBM", 32), None);
    assert_eq!(u55c.bank_address("DDR", 0), None);
}

/// rules/toolchains/fpga_platforms.bzl is what the reader writes from the files: Starlark
/// cannot read TOML, so the rules' copy is generated and must not drift.
#[test]
fn the_starlark_module_is_generated_from_the_files() {
    let all = fpga_platform::load_dir(&platforms_dir()).unwrap();
    assert!(all.contains_key(U280) && all.contains_key(U55C));
    let want = fpga_platform::starlark_module(&all);
    let path = root().join("rules/toolchains/fpga_platforms.bzl");
    let have = std::fs::read_to_string(&path).unwrap();
    assert!(
        have == want,
        "{} differs from the platform files; regenerate it: `fpga-platform starlark \
         toolchains/fpga_platforms --out rules/toolchains/fpga_platforms.bzl`",
        path.display()
    );
}

/// A copy of the U280 file with `from` replaced by `to`, read under its own name.
fn broken(from: &str, to: &str) -> String {
    let text = std::fs::read_to_string(platforms_dir().join(format!("{U280}.toml"))).unwrap();
    assert!(text.contains(from), "{from}");
    let text = text.replacen(from, to, 1);
    let shown = format!("toolchains/fpga_platforms/{U280}.toml");
    format!("{:#}", Platform::parse(&shown, &text).unwrap_err())
}

fn line_of(text_from: &str) -> usize {
    let text = std::fs::read_to_string(platforms_dir().join(format!("{U280}.toml"))).unwrap();
    text[..text.find(text_from).unwrap()].matches('\n').count() + 1
}

#[test]
fn a_broken_file_is_refused_at_its_line_naming_the_key() {
    let e = broken("board_id = \"u280\"\n", "");
    assert!(e.contains("missing field `board_id`"), "{e}");
    assert!(
        e.starts_with(&format!("toolchains/fpga_platforms/{U280}.toml:")),
        "{e}"
    );

    let e = broken("DSP = 3008", "DSP = \"many\"");
    assert!(e.contains(&format!(":{}:", line_of("DSP = 3008"))), "{e}");

    let e = broken("URAM = 320\n", "URAMS = 320\n");
    assert!(e.contains("[slr.SLR0]") && e.contains("has no URAM"), "{e}");

    let e = broken("slr = \"SLR2\"", "slr = \"SLR7\"");
    assert!(
        e.contains("SLR7") && e.contains(&format!(":{}:", line_of("[[qsfp]]"))),
        "{e}"
    );

    let e = broken(&format!("name = \"{U280}\""), "name = \"other\"");
    assert!(e.contains(":8: name") && e.contains("file's name"), "{e}");

    let e = broken("DDR = 0x40_0000_0000\n", "");
    assert!(
        e.contains(&format!(":{}: [bank_base]", line_of("[bank_base]")))
            && e.contains("no base address for the DDR banks"),
        "{e}"
    );

    let e = broken("freq_mhz = 100", "freq_mhz = 100\nfrequency = 1");
    assert!(e.contains("unknown field `frequency`"), "{e}");
}
