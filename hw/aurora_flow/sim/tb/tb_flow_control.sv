`timescale 1ps / 1ps
// Flow control under a receiver that stalls at random (bursts of stalls long
// enough to fill the RX FIFO past PROG_FULL). Checks, against the
// testbench's own scoreboard and its own count of NFC messages:
//  - no beat lost, duplicated, reordered or corrupted;
//  - the RX FIFO never overflows (no word ever arrives while it is full);
//  - XOFF/XON counters equal the NFC messages the core accepted, the last
//    message after the drain is an XON (the partner is not left paused), at
//    least one XON per XOFF, and flow control actually fired;
//  - the in-flight maximum is within the FIFO headroom above PROG_FULL;
//  - TX_COUNT = RX_COUNT = beats sent.
// Plusargs: +seed=N +beats=N +ap_mhz=N
module tb_flow_control #(
    parameter int FIFO_WIDTH = 64,
    parameter int USE_FRAMING = 0,
    parameter int RX_FIFO_SIZE = 65536,
    parameter int CH_DELAY = 64,
    parameter int RX_FIFO_PROG_FULL = RX_FIFO_SIZE / FIFO_WIDTH / 2,
    parameter int CABLE_M = 30,
    parameter int XON_ON_EMPTY = 1
);
  `include "tb_common.svh"

  localparam int RX_DEPTH = RX_FIFO_SIZE / FIFO_WIDTH;
  localparam int PROG_FULL = RX_FIFO_PROG_FULL;
  localparam int LINK_BEATS_PER_WORD = FIFO_WIDTH / 32;

  int unsigned beats = 200000;
  longint unsigned sent = 0, received = 0;
  logic [63:0] rng;

  function automatic logic [63:0] xorshift(input logic [63:0] x);
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return x;
  endfunction

  initial begin
    if ($value$plusargs("beats=%d", beats)) begin end
    rng = 64'h9E3779B97F4A7C15 ^ 64'(seed) * 64'hBF58476D1CE4E5B9;
  end

  // sender: mostly back-to-back, occasional one-cycle gaps
  initial begin
    logic fire;
    reset_and_wait_link();
    forever begin
      @(posedge ap_clk);
      fire = tx_tvalid && tx_tready;
      @(negedge ap_clk);
      if (fire) begin
        sent++;
        tx_tvalid = 1'b0;
      end
      rng = xorshift(rng);
      if (!tx_tvalid && sent < beats && rng[3:0] != 0) begin
        tx_tdata = pattern(sent);
        tx_tvalid = 1'b1;
      end
    end
  end

  // receiver: alternates ready and stall bursts of random length
  int stall_left = 0, run_left = 0;
  initial begin
    forever begin
      @(negedge ap_clk);
      if (stall_left == 0 && run_left == 0) begin
        rng = xorshift(rng);
        // stall 0..4095 cycles (long enough to pass PROG_FULL), run 0..2047 cycles
        stall_left = int'(rng[11:0]);
        run_left = int'(rng[27:17]);
      end
      if (stall_left > 0) begin
        stall_left--;
        rx_tready = 1'b0;
      end else begin
        run_left--;
        rx_tready = 1'b1;
      end
    end
  end

  always @(posedge ap_clk) begin
    if (rx_tvalid && rx_tready) begin
      if (rx_tdata !== pattern(received))
        fail($sformatf("beat %0d: got index %0d (lost/duplicated/reordered or corrupted)",
                       received, rx_tdata[31:0]));
      received++;
    end
  end

  // independent NFC bookkeeping on the core's NFC port
  int unsigned tb_xoff = 0, tb_xon = 0, tb_inflight = 0, tb_max_inflight = 0;
  logic tb_in_xoff = 1'b0;
  always @(posedge user_clk) begin
    if (dut.rx_drop) fail("RX FIFO overflow: a word arrived while the FIFO was full");
    if (dut.nfc_tvalid && dut.nfc_tready) begin
      if (dut.nfc_tdata == 16'hffff) begin
        tb_xoff++;
        tb_in_xoff = 1'b1;
        tb_inflight = 0;
      end else if (dut.nfc_tdata == 16'h0000) begin
        tb_xon++;
        tb_in_xoff = 1'b0;
      end else fail($sformatf("unexpected NFC message 0x%04h", dut.nfc_tdata));
    end else if (tb_in_xoff && !dut.nfc_tvalid && dut.ip_rx_tvalid) begin
      tb_inflight++;
      if (tb_inflight > tb_max_inflight) tb_max_inflight = tb_inflight;
    end
  end

  initial begin
    logic [31:0] v;
    wait (received == beats);
    repeat (200) @(posedge ap_clk);
    settle();
    expect_reg(FIFO_RX_OVERFLOW_COUNT, 0, "FIFO_RX_OVERFLOW_COUNT");
    expect_reg(NFC_FULL_TRIGGER_COUNT, tb_xoff, "NFC_FULL_TRIGGER_COUNT");
    expect_reg(NFC_EMPTY_TRIGGER_COUNT, tb_xon, "NFC_EMPTY_TRIGGER_COUNT");
    expect_reg(NFC_LATENCY_COUNT, tb_max_inflight, "NFC_LATENCY_COUNT");
    expect_reg(TX_COUNT, beats, "TX_COUNT");
    expect_reg(RX_COUNT, beats, "RX_COUNT");
    if (tb_xoff == 0) fail("flow control never fired: stall pattern too weak");
    if (tb_xon < tb_xoff) fail($sformatf("XON %0d < XOFF %0d after drain", tb_xon, tb_xoff));
    if (tb_in_xoff) fail("the partner is left paused: the last NFC message was an XOFF");
    if (tb_max_inflight > (RX_DEPTH - PROG_FULL) * LINK_BEATS_PER_WORD)
      fail($sformatf("in-flight %0d beats exceed the FIFO headroom", tb_max_inflight));
    axil_read(NFC_LATENCY_COUNT, v);
    $display("RESULT seed=%0d width=%0d beats=%0d xoff=%0d xon=%0d max_inflight_beats=%0d",
             seed, FIFO_WIDTH, beats, tb_xoff, tb_xon, v);
    $finish;
  end

  initial begin
    repeat (2000) #(100us);
    fail($sformatf("timeout (deadlock?): sent %0d received %0d", sent, received));
  end
endmodule
