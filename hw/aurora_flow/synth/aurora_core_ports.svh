// Port list of the generated Aurora 64B/66B core, `aurora_64b66b_0` (PG074 v12.0: 4 lanes,
// shared logic in the core, immediate NFC; framing adds tkeep/tlast/CRC), with the core's
// ascending [0:n] numbering. Stated once for the modules that stand in for the core: the
// black box (synth/aurora_64b66b_0.sv) and the loopback test double
// (sim/tb/aurora_core_loopback.sv).
`ifndef AURORA_CORE_PORTS_SVH
`define AURORA_CORE_PORTS_SVH
`define AURORA_CORE_PORTS \
    input  logic         gt_refclk1_p, \
    input  logic         gt_refclk1_n, \
    input  logic [0:3]   rxp, \
    input  logic [0:3]   rxn, \
    output logic [0:3]   txp, \
    output logic [0:3]   txn, \
    input  logic         init_clk, \
    input  logic         reset_pb, \
    input  logic         pma_init, \
    input  logic         power_down, \
    input  logic [2:0]   loopback, \
    input  logic         gt_rxcdrovrden_in, \
    output logic         user_clk_out, \
    input  logic [0:255] s_axi_tx_tdata, \
    input  logic [0:31]  s_axi_tx_tkeep, \
    input  logic         s_axi_tx_tlast, \
    input  logic         s_axi_tx_tvalid, \
    output logic         s_axi_tx_tready, \
    output logic [0:255] m_axi_rx_tdata, \
    output logic [0:31]  m_axi_rx_tkeep, \
    output logic         m_axi_rx_tlast, \
    output logic         m_axi_rx_tvalid, \
    input  logic         s_axi_nfc_tx_tvalid, \
    input  logic [0:15]  s_axi_nfc_tx_tdata, \
    output logic         s_axi_nfc_tx_tready, \
    output logic         crc_valid, \
    output logic         crc_pass_fail_n, \
    output logic         hard_err, \
    output logic         soft_err, \
    output logic         channel_up, \
    output logic [0:3]   lane_up, \
    output logic         gt_pll_lock, \
    output logic         mmcm_not_locked_out, \
    output logic [3:0]   gt_powergood
`endif
