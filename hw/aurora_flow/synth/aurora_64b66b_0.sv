`timescale 1ps / 1ps
// Port list of the generated Aurora 64B/66B core (4 lanes, shared logic in
// the core, immediate NFC; framing adds tkeep/tlast/CRC). Used as a black box
// for lint and area estimates of the kernel without the core itself.
/* verilator lint_off LITENDIAN */
/* verilator lint_off UNDRIVEN */
/* verilator lint_off UNUSEDSIGNAL */
(* blackbox *)
module aurora_64b66b_0 (
    input  logic         gt_refclk1_p,
    input  logic         gt_refclk1_n,
    input  logic [0:3]   rxp,
    input  logic [0:3]   rxn,
    output logic [0:3]   txp,
    output logic [0:3]   txn,
    input  logic         init_clk,
    input  logic         reset_pb,
    input  logic         pma_init,
    input  logic         power_down,
    input  logic [2:0]   loopback,
    input  logic         gt_rxcdrovrden_in,
    output logic         user_clk_out,
    input  logic [0:255] s_axi_tx_tdata,
    input  logic [0:31]  s_axi_tx_tkeep,
    input  logic         s_axi_tx_tlast,
    input  logic         s_axi_tx_tvalid,
    output logic         s_axi_tx_tready,
    output logic [0:255] m_axi_rx_tdata,
    output logic [0:31]  m_axi_rx_tkeep,
    output logic         m_axi_rx_tlast,
    output logic         m_axi_rx_tvalid,
    input  logic         s_axi_nfc_tx_tvalid,
    input  logic [0:15]  s_axi_nfc_tx_tdata,
    output logic         s_axi_nfc_tx_tready,
    output logic         crc_valid,
    output logic         crc_pass_fail_n,
    output logic         hard_err,
    output logic         soft_err,
    output logic         channel_up,
    output logic [0:3]   lane_up,
    output logic         gt_pll_lock,
    output logic         mmcm_not_locked_out,
    output logic [3:0]   gt_powergood
);
endmodule
