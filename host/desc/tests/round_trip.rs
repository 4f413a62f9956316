//! Real files from a build (`./forge build //deploy:tiny_2fpga`: the deploy tool's
//! `<dev>.sim.json`, the kernel rules' `kernel.json`, copied into tests/data/) read through
//! the one type and written back: equal to what the writer wrote. The writer's bytes are the
//! reference: the description is compared byte for byte (serde_json's pretty printer, keys
//! sorted, as deploy-tool writes it), a kernel.json (written by Starlark's `write_json`) as
//! JSON values.

use std::path::{Path, PathBuf};

use device_desc::{DeviceDescription, Kernel};
use serde_json::Value;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(data(name)).unwrap()
}

#[test]
fn a_built_device_description_reads_back_byte_identical() {
    for name in ["tiny_2fpga.fpga0.sim.json", "tiny_2fpga.fpga1.sim.json"] {
        let text = read(name);
        let d = DeviceDescription::parse(name, &text).unwrap();
        let again = serde_json::to_string_pretty(&serde_json::to_value(&d).unwrap()).unwrap();
        assert_eq!(again + "\n", text, "{name}");
        // every field the writer writes is typed: nothing left over to the catch-all maps
        assert!(d.extra.is_empty(), "{name}: {:?}", d.extra);
        for k in &d.kernels {
            assert!(k.extra.is_empty(), "{name}: CU {}: {:?}", k.cu, k.extra);
        }
        for l in &d.links {
            assert!(l.extra.is_empty(), "{name}: link {}: {:?}", l.cu, l.extra);
        }
    }
}

/// The facts of tiny_2fpga (deploy/tiny_2fpga.toml): fpga0 sends the cut over its only cable
/// and receives nothing; the DMA's 512-bit stream meets the 24-bit partition input through a
/// converter.
#[test]
fn the_typed_fields_carry_what_the_file_says() {
    let d = DeviceDescription::parse("fpga0", &read("tiny_2fpga.fpga0.sim.json")).unwrap();
    assert_eq!(
        (d.deployment.as_str(), d.device.as_str()),
        ("tiny_2fpga", "fpga0")
    );
    let link = &d.links[0];
    assert!(!link.idle_tx && link.idle_rx);
    assert_eq!(link.cut, link.tx_cut);
    assert!(link.rx_cut.is_none());
    let conv: Vec<_> = d.streams.iter().filter_map(|s| s.converter).collect();
    assert_eq!(conv[0].from_width, 512);
    assert_eq!(conv[0].to_width, 24);
}

#[test]
fn a_built_kernel_json_reads_back_equal() {
    for name in ["aurora_flow_0.kernel.json", "dma_in_w16.kernel.json"] {
        let k = Kernel::load(&data(name)).unwrap();
        let file: Value = serde_json::from_str(&read(name)).unwrap();
        assert_eq!(serde_json::to_value(&k).unwrap(), file, "{name}");
    }
    let dma = Kernel::load(&data("dma_in_w16.kernel.json")).unwrap();
    assert_eq!(dma.vpp_name(), "dma_in");
    assert_eq!(dma.only("axis", "out").unwrap().width, 16);
}

#[test]
fn a_description_of_another_format_is_refused_naming_the_file() {
    let text = read("tiny_2fpga.fpga0.sim.json")
        .replace("auroraforge-sim-device/1", "auroraforge-sim-device/0");
    let err = DeviceDescription::parse("x.sim.json", &text).unwrap_err();
    assert!(
        err.to_string().starts_with("x.sim.json: format is"),
        "{err}"
    );
}
