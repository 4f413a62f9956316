//! `app = "hls"` descriptions with a mistake: each is refused by the `link-config` binary with
//! exit 1, `error: FILE:LINE:` at the line of the mistake (found here by a marker, not by the
//! tool) and the words of its hint, and nothing written.

use crate::common;

use std::path::PathBuf;

const HEAD: &str = "name = \"bad\"\nplatform = \"xilinx_u280_gen3x16_xdma_1_202211_1\"\n";
const DEVICES: &str = "[[device]]\nname = \"fpga0\"\nnode = 0\ncard = 0\n\n\
                       [[device]]\nname = \"fpga1\"\nnode = 0\ncard = 1\n\n";
const CHAIN: &str = "[topology]\nkind = \"chain\"\n\n";
const PRODUCER: &str =
    "[[kernel]]\ncu = \"producer_0\"\nkernel = \"producer\"\ndevice = \"fpga0\"\n\n";
const CONSUMER: &str =
    "[[kernel]]\ncu = \"consumer_0\"\nkernel = \"consumer\"\ndevice = \"fpga1\"\n\n";
const STREAM: &str =
    "[[stream]]\nfrom = \"fpga0.producer_0.out\"\nto = \"fpga1.consumer_0.in\"\n\n";

fn hls(cabling: &str, kernels: &str, streams: &str) -> String {
    format!("{HEAD}app = \"hls\"\n\n{DEVICES}{cabling}{kernels}{streams}")
}

/// The line of the first line holding `marker`.
fn line_of(text: &str, marker: &str) -> usize {
    text.lines()
        .position(|l| l.contains(marker))
        .unwrap_or_else(|| panic!("no {marker:?} in\n{text}"))
        + 1
}

fn kernels(extra: &[PathBuf]) -> Vec<PathBuf> {
    let mut k = common::all_kernels();
    k.extend(common::kernels(&["producer", "consumer"]));
    k.extend(extra.iter().cloned());
    k
}

/// `link-config` of `device` must fail at the line of `marker` with each of `words`, and
/// leave its output directory empty.
fn refused(text: &str, device: &str, marker: &str, words: &[&str], extra: &[PathBuf]) {
    let dir = tempfile::tempdir().unwrap();
    let desc = common::write(dir.path(), "bad.toml", text);
    let out = tempfile::tempdir().unwrap();
    let plat = common::platform();
    let fc = common::kernel_toml();
    let mut args: Vec<String> = [
        "link-config",
        "--deployment",
        &desc.display().to_string(),
        "--platform",
        &plat.display().to_string(),
        "--device",
        device,
        "--flow-control",
        &fc.display().to_string(),
        "--cfg-out",
        &out.path().join("x.cfg").display().to_string(),
        "--sim-out",
        &out.path().join("x.sim.json").display().to_string(),
        "--kernel",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.extend(kernels(extra).iter().map(|k| k.display().to_string()));
    let r = common::tool(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{stderr}");
    let at = format!("error: {}:{}:", desc.display(), line_of(text, marker));
    assert!(stderr.starts_with(&at), "expected {at} in: {stderr}");
    for w in words {
        assert!(stderr.contains(w), "expected {w:?} in: {stderr}");
    }
    assert_eq!(
        std::fs::read_dir(out.path()).unwrap().count(),
        0,
        "something was written"
    );
}

#[test]
fn unknown_device_in_a_stream_end() {
    let t = hls(
        CHAIN,
        &format!("{PRODUCER}{CONSUMER}"),
        "[[stream]]\nfrom = \"fpga9.producer_0.out\"\nto = \"fpga1.consumer_0.in\"\n",
    );
    refused(&t, "fpga0", "fpga9", &["device fpga9", "fpga0, fpga1"], &[]);
}

#[test]
fn unknown_cu() {
    let t = hls(
        CHAIN,
        &format!("{PRODUCER}{CONSUMER}"),
        "[[stream]]\nfrom = \"fpga0.nobody.out\"\nto = \"fpga1.consumer_0.in\"\n",
    );
    refused(
        &t,
        "fpga1",
        "nobody",
        &["no CU nobody", "producer_0", "[[kernel]]"],
        &[],
    );
}

#[test]
fn unknown_port_lists_the_cus_stream_ports() {
    let t = hls(
        CHAIN,
        &format!("{PRODUCER}{CONSUMER}"),
        "[[stream]]\nfrom = \"fpga0.producer_0.data\"\nto = \"fpga1.consumer_0.in\"\n",
    );
    refused(
        &t,
        "fpga0",
        "producer_0.data",
        &["no stream port data", "out (out, 64 bits)"],
        &[],
    );
}

#[test]
fn stream_from_an_input() {
    let t = hls(
        CHAIN,
        &format!("{PRODUCER}{CONSUMER}"),
        "[[stream]]\nfrom = \"fpga1.consumer_0.in\"\nto = \"fpga0.producer_0.out\"\n",
    );
    refused(
        &t,
        "fpga0",
        "from = ",
        &["is an input", "swap from and to"],
        &[],
    );
}

/// A 12-bit stream (a hand-made kernel description: hls_kernel rounds TDATA up to bytes)
/// into the 64-bit producer... consumer: no whole-byte converter joins them.
#[test]
fn width_no_whole_byte_converter_can_adapt() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(common::kernel("producer")).unwrap();
    let mut k: serde_json::Value = serde_json::from_str(&text).unwrap();
    k["name"] = "narrow".into();
    for p in k["ports"].as_array_mut().unwrap() {
        if p["name"] == "out" {
            p["width"] = 12.into();
        }
    }
    let narrow = common::write(dir.path(), "narrow.json", &k.to_string());
    let t = hls(
        CHAIN,
        "[[kernel]]\ncu = \"n_0\"\nkernel = \"narrow\"\ndevice = \"fpga1\"\n\n\
         [[kernel]]\ncu = \"c_0\"\nkernel = \"consumer\"\ndevice = \"fpga1\"\n\n",
        "[[stream]]\nfrom = \"fpga1.n_0.out\"\nto = \"fpga1.c_0.in\"\n",
    );
    refused(
        &t,
        "fpga1",
        "[[stream]]",
        &["width mismatch", "12 bits", "multiple of 8"],
        &[narrow],
    );
}

#[test]
fn stream_between_cards_without_a_cable() {
    let t = hls("", &format!("{PRODUCER}{CONSUMER}"), STREAM);
    refused(
        &t,
        "fpga0",
        "[[stream]]",
        &["no cable joins fpga0 and fpga1", "[[link]]"],
        &[],
    );
}

#[test]
fn no_free_cable_direction_left() {
    let second = "[[kernel]]\ncu = \"producer_1\"\nkernel = \"producer\"\ndevice = \"fpga0\"\n\n\
                  [[kernel]]\ncu = \"consumer_1\"\nkernel = \"consumer\"\ndevice = \"fpga1\"\n\n";
    let t = hls(
        CHAIN,
        &format!("{PRODUCER}{CONSUMER}{second}"),
        &format!(
            "{STREAM}[[stream]] # second\nfrom = \"fpga0.producer_1.out\"\nto = \"fpga1.consumer_1.in\"\n"
        ),
    );
    refused(
        &t,
        "fpga0",
        "# second",
        &[
            "no free cable direction",
            "fpga0:1 -> fpga1:0",
            "add a cable",
        ],
        &[],
    );
}

#[test]
fn two_streams_on_one_cable_direction() {
    let second = "[[kernel]]\ncu = \"producer_1\"\nkernel = \"producer\"\ndevice = \"fpga0\"\n\n\
                  [[kernel]]\ncu = \"consumer_1\"\nkernel = \"consumer\"\ndevice = \"fpga1\"\n\n";
    let cables = "[[link]]\na = \"fpga0:0\"\nb = \"fpga1:0\"\n\n[[link]]\na = \"fpga0:1\"\nb = \"fpga1:1\"\n\n";
    let t = hls(
        cables,
        &format!("{PRODUCER}{CONSUMER}{second}"),
        "[[stream]]\nfrom = \"fpga0.producer_0.out\"\nto = \"fpga1.consumer_0.in\"\ncable = \"fpga0:1\"\n\n\
         [[stream]]\nfrom = \"fpga0.producer_1.out\"\nto = \"fpga1.consumer_1.in\"\ncable = \"fpga1:1\" # again\n",
    );
    refused(
        &t,
        "fpga0",
        "# again",
        &["already carries the stream at line", "pick another cable"],
        &[],
    );
}

#[test]
fn input_stream_left_unconnected() {
    let t = hls(CHAIN, &format!("{PRODUCER}{CONSUMER}"), "");
    refused(
        &t,
        "fpga0",
        "cu = \"consumer_0\"",
        &[
            "input stream in is not connected",
            "to = \"fpga1.consumer_0.in\"",
        ],
        &[],
    );
}

#[test]
fn output_port_used_twice() {
    let second = "[[kernel]]\ncu = \"consumer_1\"\nkernel = \"consumer\"\ndevice = \"fpga0\"\n\n";
    let t = hls(
        CHAIN,
        &format!("{PRODUCER}{CONSUMER}{second}"),
        &format!("{STREAM}[[stream]]\nfrom = \"fpga0.producer_0.out\" # twice\nto = \"fpga0.consumer_1.in\"\n"),
    );
    refused(
        &t,
        "fpga0",
        "# twice",
        &["already feeds the stream at line", "one reader"],
        &[],
    );
}

#[test]
fn kernel_not_among_the_deployments_kernels() {
    let t = hls(
        CHAIN,
        &format!(
            "{PRODUCER}{}",
            CONSUMER.replace("kernel = \"consumer\"", "kernel = \"mystery\"")
        ),
        STREAM,
    );
    refused(
        &t,
        "fpga0",
        "mystery",
        &[
            "not among the deployment's kernels",
            "producer",
            "tie_off_sink",
        ],
        &[],
    );
}

#[test]
fn scalar_default_naming_no_scalar() {
    let p = PRODUCER.replace(
        "device = \"fpga0\"\n",
        "device = \"fpga0\"\nscalars = { size = 4 }\n",
    );
    let t = hls(CHAIN, &format!("{p}{CONSUMER}"), STREAM);
    refused(
        &t,
        "fpga0",
        "size = 4",
        &["no scalar argument size", "its scalars: count"],
        &[],
    );
}

#[test]
fn scalar_default_not_an_integer() {
    let p = PRODUCER.replace(
        "device = \"fpga0\"\n",
        "device = \"fpga0\"\nscalars = { count = 1.5 }\n",
    );
    let t = hls(CHAIN, &format!("{p}{CONSUMER}"), STREAM);
    refused(&t, "fpga1", "count = 1.5", &["not an integer"], &[]);
}

#[test]
fn memory_key_naming_no_m_axi_argument() {
    let p = PRODUCER.replace(
        "device = \"fpga0\"\n",
        "device = \"fpga0\"\nmemory = { dst = \"HBM[1]\" }\n",
    );
    let t = hls(CHAIN, &format!("{p}{CONSUMER}"), STREAM);
    refused(
        &t,
        "fpga0",
        "memory = ",
        &["no m_axi argument dst", "its m_axi arguments: src"],
        &[],
    );
}

#[test]
fn memory_bank_the_platform_lacks() {
    let p = PRODUCER.replace(
        "device = \"fpga0\"\n",
        "device = \"fpga0\"\nmemory = { src = \"HBM[99]\" }\n",
    );
    let t = hls(CHAIN, &format!("{p}{CONSUMER}"), STREAM);
    refused(&t, "fpga0", "HBM[99]", &["HBM[0..31]"], &[]);
}

#[test]
fn duplicate_cu_name_on_a_device() {
    let again =
        "[[kernel]]\ncu = \"producer_0\" # again\nkernel = \"producer\"\ndevice = \"fpga0\"\n\n";
    let t = hls(CHAIN, &format!("{PRODUCER}{CONSUMER}{again}"), STREAM);
    refused(&t, "fpga0", "# again", &["twice", "rename one"], &[]);
}

#[test]
fn kernel_tables_in_another_app() {
    let t = format!(
        "{HEAD}app = \"aurora_bench\"\n\n[[device]]\nname = \"fpga0\"\nnode = 0\ncard = 0\n\
         role = \"bench\"\n\n[[device]]\nname = \"fpga1\"\nnode = 0\ncard = 1\nrole = \"bench\"\n\n\
         {CHAIN}{PRODUCER}"
    );
    refused(
        &t,
        "fpga0",
        "[[kernel]]",
        &["app = \"aurora_bench\"", "app = \"hls\""],
        &[],
    );
}

/// AuroraFlow's RX FIFO headroom (hw/aurora_flow/kernel.toml [flow_control], the formula
/// the other apps are checked with) cannot hold what 5 km of fibre keeps in flight.
#[test]
fn cable_too_long_for_the_receivers_rx_fifo() {
    let t = hls(
        "[topology]\nkind = \"chain\"\ncable_m = 5000\n\n",
        &format!("{PRODUCER}{CONSUMER}"),
        STREAM,
    );
    refused(
        &t,
        "fpga1",
        "kind = \"chain\"",
        &["in flight after an XOFF", "shorten the cable"],
        &[],
    );
}

#[test]
fn cable_on_a_stream_within_one_card() {
    let second = "[[kernel]]\ncu = \"consumer_1\"\nkernel = \"consumer\"\ndevice = \"fpga0\"\n\n";
    let t = hls(
        CHAIN,
        &format!("{PRODUCER}{second}"),
        "[[stream]]\nfrom = \"fpga0.producer_0.out\"\nto = \"fpga0.consumer_1.in\"\ncable = \"fpga0:1\"\n",
    );
    refused(
        &t,
        "fpga0",
        "cable = ",
        &["on one card", "remove cable"],
        &[],
    );
}

/// What needs no kernel description is refused already by `check` (the description's first
/// build action), its stamp not written.
#[test]
fn check_refuses_before_any_link_step() {
    let t = hls("", &format!("{PRODUCER}{CONSUMER}"), STREAM);
    let dir = tempfile::tempdir().unwrap();
    let desc = common::write(dir.path(), "bad.toml", &t);
    let out = tempfile::tempdir().unwrap();
    let stamp = out.path().join("checked.txt");
    let r = common::tool(&[
        "check",
        "--deployment",
        &desc.display().to_string(),
        "--platform",
        &common::platform().display().to_string(),
        "--devices",
        "fpga0,fpga1",
        "--stamp",
        &stamp.display().to_string(),
    ]);
    let stderr = String::from_utf8_lossy(&r.stderr);
    assert_eq!(r.status.code(), Some(1), "{stderr}");
    let at = format!("error: {}:{}:", desc.display(), line_of(&t, "[[stream]]"));
    assert!(stderr.starts_with(&at), "expected {at} in: {stderr}");
    assert!(
        stderr.contains("no cable joins fpga0 and fpga1"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_dir(out.path()).unwrap().count(), 0);
}
