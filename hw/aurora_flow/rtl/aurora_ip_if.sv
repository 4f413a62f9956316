`timescale 1ps / 1ps
`include "af_gt_ports.svh"
// The one boundary behind which the Aurora 64B/66B core sits. With
// AURORA_SIM defined it is the behavioural core of sim/model (the serial
// side becomes a channel word, the reference clock input doubles as the
// 402.83 MHz user clock); otherwise it is the generated `aurora_64b66b_0`
// (4 lanes, 25.78125 Gbps, 161.1328125 MHz refclk, 100 MHz init clock,
// immediate NFC, streaming or framing + CRC; see tcl/create_aurora_ip.tcl).
// Wire format = the public AuroraFlow kernel's (pc2/AuroraFlow
// rtl/aurora_flow_io.v and rtl/aurora_flow.v.template.v connect the 256-bit
// AXI-Stream `tdata[255:0]` and `tkeep[31:0]` straight to the core's
// `s_axi_tx_tdata[0:255]` / `s_axi_tx_tkeep[0:31]`). Verilog connects
// vectors by position, so stream bit 255 is core bit 0: stream byte b is
// core byte 31-b (PG074: core byte 0 = [0:7] goes first, on lane 0), and
// stream tkeep[b] is core tkeep[31-b], which again qualifies stream byte b.
// README.md "Wire format" has the table; sim/tb/tb_wire_format.sv checks it.
module aurora_ip_if #(
    parameter bit FRAMING         = 1'b0,
    // behavioural core only
    parameter int SIM_LAT_TX      = 27,
    parameter int SIM_LAT_RX      = 27,
    parameter int SIM_CC_PERIOD   = af_kernel_pkg::CC_PERIOD_CYCLES
) (
    input  logic         init_clk,
    input  logic         reset_pb,
    input  logic         pma_init,
    output logic         user_clk,
    `AF_GT_PORTS,
    input  logic [255:0] tx_tdata,
    input  logic         tx_tvalid,
    output logic         tx_tready,
    input  logic         tx_tlast,
    input  logic [4:0]   tx_nbytes_m1,
    output logic [255:0] rx_tdata,
    output logic         rx_tvalid,
    output logic         rx_tlast,
    output logic [4:0]   rx_nbytes_m1,
    input  logic         nfc_tvalid,
    input  logic [15:0]  nfc_tdata,
    output logic         nfc_tready,
    output logic         crc_valid,
    output logic         crc_pass_fail_n,
    output logic [12:0]  status  // CORE_STATUS layout (0x11ff = all good)
);
  logic [3:0] gt_powergood, lane_up;
  logic gt_pll_lock, mmcm_not_locked, hard_err, soft_err, channel_up;
  assign status = {
    channel_up, soft_err, hard_err, mmcm_not_locked, gt_pll_lock, lane_up, gt_powergood
  };

`ifdef AURORA_SIM
  /* verilator lint_off UNUSEDSIGNAL */
  logic init_clk_unused;
  /* verilator lint_on UNUSEDSIGNAL */
  assign init_clk_unused = init_clk;
  assign user_clk = gt_refclk;

  aurora_sim_ip #(
      .FRAMING  (FRAMING),
      .LAT_TX   (SIM_LAT_TX),
      .LAT_RX   (SIM_LAT_RX),
      .CC_PERIOD(SIM_CC_PERIOD)
  ) u_core (
      .user_clk           (user_clk),
      .reset_pb           (reset_pb),
      .pma_init           (pma_init),
      .s_axi_tx_tdata     (tx_tdata),
      .s_axi_tx_tvalid    (tx_tvalid),
      .s_axi_tx_tready    (tx_tready),
      .s_axi_tx_tlast     (tx_tlast),
      .s_axi_tx_nbytes_m1 (tx_nbytes_m1),
      .m_axi_rx_tdata     (rx_tdata),
      .m_axi_rx_tvalid    (rx_tvalid),
      .m_axi_rx_tlast     (rx_tlast),
      .m_axi_rx_nbytes_m1 (rx_nbytes_m1),
      .s_axi_nfc_tx_tvalid(nfc_tvalid),
      .s_axi_nfc_tx_tdata (nfc_tdata),
      .s_axi_nfc_tx_tready(nfc_tready),
      .crc_valid          (crc_valid),
      .crc_pass_fail_n    (crc_pass_fail_n),
      .gt_powergood       (gt_powergood),
      .lane_up            (lane_up),
      .gt_pll_lock        (gt_pll_lock),
      .mmcm_not_locked    (mmcm_not_locked),
      .hard_err           (hard_err),
      .soft_err           (soft_err),
      .channel_up         (channel_up),
      .ch_tx              (ch_tx),
      .ch_rx              (ch_rx)
  );
`else
  /* verilator lint_off UNUSEDPARAM */
  localparam int UNUSED_SIM = SIM_LAT_TX + SIM_LAT_RX + SIM_CC_PERIOD;
  /* verilator lint_on UNUSEDPARAM */
  // the core's own (ascending) bit numbering
  /* verilator lint_off LITENDIAN */
  logic [0:255] ip_tx_tdata, ip_rx_tdata;
  logic [0:31] ip_tx_tkeep, ip_rx_tkeep;
  logic [0:15] ip_nfc_tdata;
  /* verilator lint_on LITENDIAN */
  // stream-numbered keep (bit b = stream byte b), contiguous from byte 0; all bytes of a beat
  // that is not a frame's last (tx_nbytes_m1 is the last beat's length only), as the public
  // kernel's width converter gives it
  logic [31:0] tx_keep, rx_keep;
  assign tx_keep[0] = 1'b1;
  for (genvar b = 1; b < 32; b++) begin : g_keep
    assign tx_keep[b] = !tx_tlast || (5'(b) <= tx_nbytes_m1);
  end
  // positional, as the public kernel's port connections: [255] -> [0]
  assign ip_tx_tdata = tx_tdata;
  assign rx_tdata = ip_rx_tdata;
  assign ip_tx_tkeep = tx_keep;
  assign rx_keep = ip_rx_tkeep;
  assign ip_nfc_tdata = nfc_tdata;

  // valid bytes - 1 of the last beat (keep contiguous from stream byte 0)
  always_comb begin
    rx_nbytes_m1 = '0;
    for (int b = 1; b < 32; b++) if (rx_keep[b]) rx_nbytes_m1 = 5'(b);
  end

  // the pins both generated variants have, in PG074's order
`define AF_CORE_PINS \
        .gt_refclk1_p       (gt_refclk_p), \
        .gt_refclk1_n       (gt_refclk_n), \
        .rxp                (gt_rxp_in), \
        .rxn                (gt_rxn_in), \
        .txp                (gt_txp_out), \
        .txn                (gt_txn_out), \
        .init_clk           (init_clk), \
        .reset_pb           (reset_pb), \
        .pma_init           (pma_init), \
        .power_down         (1'b0), \
        .loopback           (3'b000), \
        .gt_rxcdrovrden_in  (1'b0), \
        .user_clk_out       (user_clk), \
        .s_axi_tx_tdata     (ip_tx_tdata), \
        .s_axi_tx_tvalid    (tx_tvalid), \
        .s_axi_tx_tready    (tx_tready), \
        .m_axi_rx_tdata     (ip_rx_tdata), \
        .m_axi_rx_tvalid    (rx_tvalid), \
        .s_axi_nfc_tx_tvalid(nfc_tvalid), \
        .s_axi_nfc_tx_tdata (ip_nfc_tdata), \
        .s_axi_nfc_tx_tready(nfc_tready), \
        .hard_err           (hard_err), \
        .soft_err           (soft_err), \
        .channel_up         (channel_up), \
        .lane_up            (lane_up), \
        .gt_pll_lock        (gt_pll_lock), \
        .mmcm_not_locked_out(mmcm_not_locked), \
        .gt_powergood       (gt_powergood)

  // The streaming core has no tlast/tkeep/CRC ports (PG074), so the two
  // generated variants are instantiated with different port lists.
  if (FRAMING) begin : g_framing
    logic ip_rx_tlast;
    assign rx_tlast = ip_rx_tlast;
    aurora_64b66b_0 u_core (
        `AF_CORE_PINS,
        .s_axi_tx_tkeep     (ip_tx_tkeep),
        .s_axi_tx_tlast     (tx_tlast),
        .m_axi_rx_tkeep     (ip_rx_tkeep),
        .m_axi_rx_tlast     (ip_rx_tlast),
        .crc_valid          (crc_valid),
        .crc_pass_fail_n    (crc_pass_fail_n)
    );
  end else begin : g_streaming
    /* verilator lint_off UNUSEDSIGNAL */
    logic [5:0] unused_framing;
    /* verilator lint_on UNUSEDSIGNAL */
    assign unused_framing = {tx_tlast, ^ip_tx_tkeep, ^rx_keep, 3'b0};
    assign ip_rx_tkeep = '1;
    assign rx_tlast = 1'b0;
    assign crc_valid = 1'b0;
    assign crc_pass_fail_n = 1'b1;
    // the streaming core has no framing pins (a black-box port list may)
    /* verilator lint_off PINMISSING */
    aurora_64b66b_0 u_core (
        `AF_CORE_PINS
    );
    /* verilator lint_on PINMISSING */
  end
`undef AF_CORE_PINS
`endif
endmodule
