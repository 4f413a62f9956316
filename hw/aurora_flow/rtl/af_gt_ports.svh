// `AF_GT_PORTS: the link side of the kernel and of its core boundary (aurora_flow,
// aurora_ip_if): the QSFP's reference clock and four lanes, or with AURORA_SIM the behavioural
// core's user clock and channel words (layout in sim/model/aurora_sim_ip.sv). A list without a
// trailing comma.
`ifndef AF_GT_PORTS_SVH
`define AF_GT_PORTS_SVH
`ifdef AURORA_SIM
`define AF_GT_PORTS \
    input  logic         gt_refclk, \
    output logic [301:0] ch_tx, \
    input  logic [301:0] ch_rx
`else
`define AF_GT_PORTS \
    input  logic         gt_refclk_p, \
    input  logic         gt_refclk_n, \
    input  logic [3:0]   gt_rxp_in, \
    input  logic [3:0]   gt_rxn_in, \
    output logic [3:0]   gt_txp_out, \
    output logic [3:0]   gt_txn_out
`endif
`endif
