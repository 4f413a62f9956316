`timescale 1ps / 1ps
// Status counters on the link clock: every cycle in which a status bit is
// not in its good state is counted, per lane where the core reports per lane
// (each lane independently), plus dropped RX words and framing CRC results.
module af_link_monitor (
    input  logic        clk,
    input  logic        rst_n,
    input  logic        counter_reset,
    input  logic [12:0] status,         // CORE_STATUS layout, see aurora_flow.sv
    input  logic        rx_drop,        // a word arrived while the RX FIFO was full
    input  logic        crc_valid,
    input  logic        crc_pass_fail_n,
    output logic [31:0] status_not_ok,
    output logic [127:0] gt_not_ready,  // lane i at [32*i +: 32]
    output logic [127:0] line_down,
    output logic [31:0] pll_not_locked,
    output logic [31:0] mmcm_not_locked,
    output logic [31:0] hard_err,
    output logic [31:0] soft_err,
    output logic [31:0] channel_down,
    output logic [31:0] rx_overflow,
    output logic [31:0] frames_received,
    output logic [31:0] frames_with_errors
);
  localparam logic [12:0] CORE_STATUS_OK = 13'h11ff;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      {status_not_ok, gt_not_ready, line_down, pll_not_locked, mmcm_not_locked, hard_err,
       soft_err, channel_down, rx_overflow, frames_received, frames_with_errors} <= '0;
    end else if (counter_reset) begin
      {status_not_ok, gt_not_ready, line_down, pll_not_locked, mmcm_not_locked, hard_err,
       soft_err, channel_down, rx_overflow, frames_received, frames_with_errors} <= '0;
    end else begin
      if (status != CORE_STATUS_OK) status_not_ok <= status_not_ok + 1'b1;
      for (int i = 0; i < 4; i++) begin
        if (!status[i]) gt_not_ready[32*i+:32] <= gt_not_ready[32*i+:32] + 1'b1;
        if (!status[4+i]) line_down[32*i+:32] <= line_down[32*i+:32] + 1'b1;
      end
      if (!status[8]) pll_not_locked <= pll_not_locked + 1'b1;
      if (status[9]) mmcm_not_locked <= mmcm_not_locked + 1'b1;
      if (status[10]) hard_err <= hard_err + 1'b1;
      if (status[11]) soft_err <= soft_err + 1'b1;
      if (!status[12]) channel_down <= channel_down + 1'b1;
      if (rx_drop) rx_overflow <= rx_overflow + 1'b1;
      if (crc_valid) frames_received <= frames_received + 1'b1;
      if (crc_valid && !crc_pass_fail_n) frames_with_errors <= frames_with_errors + 1'b1;
    end
  end
endmodule
