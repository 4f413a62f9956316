`timescale 1ps / 1fs
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
module tb_flow_control;
  `include "tb_common.svh"

  localparam int RX_DEPTH = RX_FIFO_SIZE / FIFO_WIDTH;
  localparam int PROG_FULL = RX_FIFO_PROG_FULL;
  localparam int LINK_BEATS_PER_WORD = FIFO_WIDTH / 32;

  int unsigned beats = 200000;
  logic [63:0] rng;

  initial begin
    if ($value$plusargs("beats=%d", beats)) begin end
    rng = 64'h9E3779B97F4A7C15 ^ 64'(seed) * 64'hBF58476D1CE4E5B9;
  end

  // sender: mostly back-to-back, occasional one-cycle gaps
  initial begin
    logic fire;
    reset_and_wait_link();
    forever begin
      tx_cycle(fire);
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

  // independent NFC bookkeeping on the core's NFC port (a repeated message, the kernel's
  // lost-message repair, is not a trigger and is told apart by the kernel's flag)
  int unsigned tb_xoff = 0, tb_xon = 0, tb_refresh = 0, tb_inflight = 0, tb_max_inflight = 0;
  logic tb_in_xoff = 1'b0;
  always @(posedge user_clk) begin
    if (dut.rx_drop) fail("RX FIFO overflow: a word arrived while the FIFO was full");
    if (dut.nfc_tvalid && dut.nfc_tready) begin
      if (dut.nfc_refresh) tb_refresh++;
      if (dut.nfc_tdata == 16'hffff) begin
        if (!dut.nfc_refresh) begin
          tb_xoff++;
          tb_inflight = 0;
        end
        tb_in_xoff = 1'b1;
      end else if (dut.nfc_tdata == 16'h0000) begin
        if (!dut.nfc_refresh) tb_xon++;
        tb_in_xoff = 1'b0;
      end else fail($sformatf("unexpected NFC message 0x%04h", dut.nfc_tdata));
    end else if (tb_in_xoff && dut.ip_rx_tvalid) begin
      tb_inflight++;
      if (tb_inflight > tb_max_inflight) tb_max_inflight = tb_inflight;
    end
  end

  // +nfc_errors=1: bit errors in the NFC fields of the link into the dut, one every
  // 3000..11000 link cycles; each must be reported as a soft error, and nothing may be
  // lost or hang (the kernel repeats a lost XON / XOFF)
  int unsigned nfc_errors = 0;
  initial begin
    logic [63:0] erng;
    if ($value$plusargs("nfc_errors=%d", nfc_errors)) begin end
    erng = 64'hD1B54A32D192ED03 ^ 64'(seed);
    if (nfc_errors != 0) begin
      wait (sent > 0);
      forever begin
        erng = xorshift(erng);
        repeat (3000 + int'(erng[12:0])) @(negedge user_clk);
        channel_error(erng[20] ? 9'd296 : 9'd295);  // NFC XOFF bit or NFC valid
      end
    end
  end

  initial begin
    logic [31:0] v;
    wait (received == beats);
    repeat (200) @(posedge ap_clk);
    settle();
    expect_reg(af_kernel_pkg::REG_FIFO_RX_OVERFLOW_COUNT, 0, "FIFO_RX_OVERFLOW_COUNT");
    expect_reg(af_kernel_pkg::REG_NFC_FULL_TRIGGER_COUNT, tb_xoff, "NFC_FULL_TRIGGER_COUNT");
    expect_reg(af_kernel_pkg::REG_NFC_EMPTY_TRIGGER_COUNT, tb_xon, "NFC_EMPTY_TRIGGER_COUNT");
    expect_reg(af_kernel_pkg::REG_NFC_LATENCY_COUNT, tb_max_inflight, "NFC_LATENCY_COUNT");
    expect_reg(af_kernel_pkg::REG_TX_COUNT, beats, "TX_COUNT");
    expect_reg(af_kernel_pkg::REG_SOFT_ERR_COUNT, errors_injected, "SOFT_ERR_COUNT (one per corrupted control block)");
    if (nfc_errors != 0 && errors_injected == 0) fail("no NFC error was injected");
    expect_reg(af_kernel_pkg::REG_RX_COUNT, beats, "RX_COUNT");
    if (tb_xoff == 0) fail("flow control never fired: stall pattern too weak");
    if (tb_xon < tb_xoff) fail($sformatf("XON %0d < XOFF %0d after drain", tb_xon, tb_xoff));
    if (tb_in_xoff) fail("the partner is left paused: the last NFC message was an XOFF");
    if (tb_max_inflight > (RX_DEPTH - PROG_FULL) * LINK_BEATS_PER_WORD)
      fail($sformatf("in-flight %0d beats exceed the FIFO headroom", tb_max_inflight));
    axil_read(af_kernel_pkg::REG_NFC_LATENCY_COUNT, v);
    $display("RESULT seed=%0d width=%0d beats=%0d ppm=%0d ch_delay=%0d xoff=%0d xon=%0d repeated=%0d nfc_errors=%0d max_inflight_beats=%0d",
             seed, FIFO_WIDTH, beats, ppm, CH_DELAY, tb_xoff, tb_xon, tb_refresh, errors_injected, v);
    $finish;
  end

  initial watchdog(200000);
endmodule
