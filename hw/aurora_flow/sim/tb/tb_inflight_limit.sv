`timescale 1ps / 1fs
// A kernel sized exactly at the in-flight limit of kernel.toml [flow_control]
// (RX_FIFO_PROG_FULL = depth - (fixed + beats_per_metre x CABLE_M) x 32 B /
// FIFO_WIDTH, the largest prog_full the rule accepts) over a channel as long
// as CABLE_M of fibre (4.9 ns/m each way at the 402.83 MHz link clock). The
// sender streams at full rate; the receiver stalls for a long time
// (+stall=N cycles, far longer than it takes to fill every FIFO on the path)
// at random points, +stalls=N times. Checks: no word ever finds the RX FIFO
// full, FIFO_RX_OVERFLOW_COUNT = 0, every beat arrives once, in order,
// intact; reports the most words that arrived above prog_full (the in-flight
// data) against the headroom. One prog_full higher is rejected at
// elaboration (//hw/aurora_flow:inflight_reject) and by the rule.
module tb_inflight_limit #(
    parameter int FIFO_WIDTH = 32,
    parameter int USE_FRAMING = 0,
    parameter int RX_FIFO_SIZE = 16384,
    parameter int CABLE_M = 30,
    // ceil(metres x 4.9 ns / 2.482 ns), at least the 1 cycle of the channel register
    parameter int CH_DELAY = CABLE_M == 0 ? 1 : (CABLE_M * 4900 + 2481) / 2482,
    parameter int RX_FIFO_PROG_FULL = RX_FIFO_SIZE / FIFO_WIDTH -
        (af_kernel_pkg::FIXED_INFLIGHT_BEATS + af_kernel_pkg::BEATS_PER_METRE * CABLE_M) *
        af_kernel_pkg::LINK_BEAT_BYTES / FIFO_WIDTH,
    parameter int XON_ON_EMPTY = af_kernel_pkg::DEFAULT_XON_ON_EMPTY
);
  // its own parameters: the prog_full and the channel follow CABLE_M
`define AF_TB_OWN_PARAMS
  `include "tb_common.svh"

  localparam int RX_DEPTH = RX_FIFO_SIZE / FIFO_WIDTH;
  localparam int HEADROOM_WORDS = RX_DEPTH - RX_FIFO_PROG_FULL;
  int unsigned beats = 200000, stalls = 8, stall = 20000;
  int unsigned max_above = 0;
  logic [63:0] rng;

  initial begin
    if ($value$plusargs("beats=%d", beats)) begin end
    if ($value$plusargs("stalls=%d", stalls)) begin end
    if ($value$plusargs("stall=%d", stall)) begin end
    rng = 64'h2545F4914F6CDD1D ^ 64'(seed) * 64'h9E3779B97F4A7C15;
    // the full-rate sender, once +beats is read
    start_full_rate(beats);
  end

  // receiver: ready, with `stalls` long stalls at random points
  initial begin
    rx_tready = 1'b1;
    for (int s = 0; s < int'(stalls); s++) begin
      rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
      repeat (int'(rng[13:0]) + 500) @(negedge ap_clk);
      rx_tready = 1'b0;
      repeat (stall) @(negedge ap_clk);
      rx_tready = 1'b1;
    end
  end

  always @(posedge ap_clk) begin
    if (rx_tvalid && rx_tready) begin
      if (rx_tdata !== pattern(received))
        fail($sformatf("beat %0d: got index %0d (lost, duplicated or corrupted)", received,
                       rx_tdata[31:0]));
      received++;
    end
  end

  always @(posedge user_clk) begin
    if (dut.rx_drop) fail($sformatf("RX FIFO overflow at the in-flight limit (prog_full %0d, headroom %0d words)",
                                    RX_FIFO_PROG_FULL, HEADROOM_WORDS));
    if (int'(dut.rxf_wr_level) > RX_FIFO_PROG_FULL &&
        int'(dut.rxf_wr_level) - RX_FIFO_PROG_FULL > int'(max_above))
      max_above = int'(dut.rxf_wr_level) - RX_FIFO_PROG_FULL;
  end

  initial begin
    wait (received == beats);
    settle();
    expect_reg(af_kernel_pkg::REG_FIFO_RX_OVERFLOW_COUNT, 0, "FIFO_RX_OVERFLOW_COUNT");
    if (max_above == 0) fail("the stalls never filled the FIFO past prog_full");
    $display("RESULT width=%0d cable_m=%0d ch_delay=%0d prog_full=%0d headroom_words=%0d max_words_above_prog_full=%0d (%0d link beats)",
             FIFO_WIDTH, CABLE_M, CH_DELAY, RX_FIFO_PROG_FULL, HEADROOM_WORDS, max_above,
             max_above * FIFO_WIDTH / 32);
    $finish;
  end

  initial watchdog(200000);
endmodule
