//! The loopback benchmark's link config against the one AuroraFlow publishes for the same
//! design (send + recv per port, both ports on one card).

use crate::common;

use std::collections::BTreeSet;

use deploy_tool::commands::{link_config_text, LinkConfigArgs};

/// pc2/AuroraFlow, test/cfg/aurora_flow_test_hw.cfg at commit
/// 957c8bb6df0bcb3686d4dbc0314e3703466699be (unchanged since 261c22cce2a260d0eb965def8b90ffdd77d669af),
/// its `[connectivity]` lines verbatim.
const AURORAFLOW_TEST_HW_CFG: &str = "\
nk=aurora_flow_0:1:aurora_flow_0
nk=aurora_flow_1:1:aurora_flow_1
nk=send:2:send_0,send_1
nk=recv:2:recv_0,recv_1
slr=aurora_flow_0:SLR2
slr=aurora_flow_1:SLR2
sp=send_0.m_axi_gmem:HBM[0]
sp=send_1.m_axi_gmem:HBM[1]
sp=recv_0.data_output:HBM[2]
sp=recv_1.data_output:HBM[3]
stream_connect=aurora_flow_0.rx_axis:recv_0.data_input
stream_connect=send_0.data_output:aurora_flow_0.tx_axis
stream_connect=aurora_flow_1.rx_axis:recv_1.data_input
stream_connect=send_1.data_output:aurora_flow_1.tx_axis
stream_connect=recv_0.loopback_ack_stream:send_0.loopback_ack_stream
stream_connect=recv_1.loopback_ack_stream:send_1.loopback_ack_stream
stream_connect=recv_0.pair_ack_stream:send_1.pair_ack_stream
stream_connect=recv_1.pair_ack_stream:send_0.pair_ack_stream
connect=io_clk_qsfp0_refclkb_00:aurora_flow_0/gt_refclk_0
connect=aurora_flow_0/gt_port:io_gt_qsfp0_00
connect=aurora_flow_0/init_clk:ii_level0_wire/ulp_m_aclk_freerun_ref_00
connect=io_clk_qsfp1_refclkb_00:aurora_flow_1/gt_refclk_1
connect=aurora_flow_1/gt_port:io_gt_qsfp1_00
connect=aurora_flow_1/init_clk:ii_level0_wire/ulp_m_aclk_freerun_ref_00
";

fn loopback_cfg() -> (String, serde_json::Value) {
    let kernels = common::all_kernels();
    let dep = common::deployment("aurora_loopback");
    let plat = common::platform();
    let ktoml = common::kernel_toml();
    let args = LinkConfigArgs {
        deployment: &dep,
        platform: &plat,
        device: "fpga0",
        kernels: &kernels,
        plan: None,
        flow_control: Some(&ktoml),
        finn_model: None,
        cfg_out: std::path::Path::new("unused.cfg"),
        sim_out: std::path::Path::new("unused.json"),
    };
    let (cfg, sim, _) = link_config_text(&args).expect("loopback links");
    (cfg, sim)
}

#[test]
fn loopback_connectivity_is_auroraflows_published_config() {
    let (cfg, _) = loopback_cfg();
    let ours: BTreeSet<String> = common::section(&cfg, "connectivity").into_iter().collect();
    // v++ takes an m_axi binding by argument name or by interface name; recv's only m_axi
    // argument `data_output` is interface m_axi_gmem (bundle=gmem, test/hls/recv.cpp), which
    // is how the kernel description names the port.
    let reference: BTreeSet<String> = AURORAFLOW_TEST_HW_CFG
        .lines()
        .map(|l| l.replace(".data_output:HBM", ".m_axi_gmem:HBM"))
        .collect();
    let missing: Vec<_> = reference.difference(&ours).collect();
    let extra: Vec<_> = ours.difference(&reference).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:#?}\nextra {extra:#?}\n{cfg}"
    );
}

#[test]
fn loopback_config_sets_the_kernel_clock_of_every_cu() {
    let (cfg, _) = loopback_cfg();
    let clock = common::section(&cfg, "clock");
    // deploy/aurora_loopback.toml: clock_mhz = 250; six CUs with an ap_clk
    assert_eq!(clock.len(), 6, "{cfg}");
    assert!(clock.contains(&"freqHz=250000000:send_0.ap_clk".to_string()));
}

#[test]
fn loopback_sim_description_follows_the_contract() {
    let (_, sim) = loopback_cfg();
    assert_eq!(sim["format"], "auroraforge-sim-device/1");
    assert_eq!(sim["deployment"], "aurora_loopback");
    assert_eq!(sim["kernels"].as_array().unwrap().len(), 6);
    assert_eq!(sim["streams"].as_array().unwrap().len(), 8);
    assert_eq!(sim["memory"].as_array().unwrap().len(), 4);
    let links = sim["links"].as_array().unwrap();
    assert_eq!(links.len(), 2);
    assert_eq!(links[0]["cu"], "aurora_flow_0");
    assert_eq!(links[0]["peer_device"], "fpga0");
    assert_eq!(links[0]["peer_port"], 1);
    assert_eq!(links[1]["peer_port"], 0);
}

/// pc2/AuroraFlow, aurora_flow_ring_hw.cfg at commit ebc82a00bff399fdb5c8455d40a5cadd5b10a686
/// (the 48-FPGA ring, removed later), its `[connectivity]` lines verbatim. Its pass-through
/// kernel is `send_recv` (data_input -> data_output); ours is `forward` (in -> out).
const AURORAFLOW_RING_HW_CFG: &str = "\
nk=aurora_flow_0:1:aurora_flow_0
nk=aurora_flow_1:1:aurora_flow_1
nk=send_recv:2:send_recv_0,send_recv_1
slr=aurora_flow_0:SLR2
slr=aurora_flow_1:SLR2
stream_connect=aurora_flow_0.rx_axis:send_recv_0.data_input
stream_connect=send_recv_0.data_output:aurora_flow_1.tx_axis
stream_connect=aurora_flow_1.rx_axis:send_recv_1.data_input
stream_connect=send_recv_1.data_output:aurora_flow_0.tx_axis
connect=io_clk_qsfp0_refclkb_00:aurora_flow_0/gt_refclk_0
connect=aurora_flow_0/gt_port:io_gt_qsfp0_00
connect=aurora_flow_0/init_clk:ii_level0_wire/ulp_m_aclk_freerun_ref_00
connect=io_clk_qsfp1_refclkb_00:aurora_flow_1/gt_refclk_1
connect=aurora_flow_1/gt_port:io_gt_qsfp1_00
connect=aurora_flow_1/init_clk:ii_level0_wire/ulp_m_aclk_freerun_ref_00
";

#[test]
fn ring_hop_connectivity_is_auroraflows_ring_config() {
    let kernels = common::all_kernels();
    let dep = common::deployment("aurora_ring_48");
    let plat = common::platform();
    let (cfg, _, _) = link_config_text(&LinkConfigArgs {
        deployment: &dep,
        platform: &plat,
        device: "fpga17",
        kernels: &kernels,
        plan: None,
        flow_control: None,
        finn_model: None,
        cfg_out: std::path::Path::new("unused.cfg"),
        sim_out: std::path::Path::new("unused.json"),
    })
    .expect("a ring hop links");
    let ours: BTreeSet<String> = common::section(&cfg, "connectivity").into_iter().collect();
    let reference: BTreeSet<String> = AURORAFLOW_RING_HW_CFG
        .lines()
        .map(|l| {
            l.replace("send_recv", "forward")
                .replace(".data_input", ".in")
                .replace(".data_output", ".out")
        })
        .collect();
    assert_eq!(ours, reference, "{cfg}");
}
