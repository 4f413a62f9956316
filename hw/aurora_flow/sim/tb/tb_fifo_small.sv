`timescale 1ps / 1fs
// A cable longer than the one the kernel was sized for (:fifo_small in
// hw/aurora_flow/BUCK sets it with -G): 8 KiB at 32 B = 256 words, PROG_FULL
// 128, legal for CABLE_M = 0 (128 beats of headroom), but the channel is 300
// link cycles (~150 m) each way, so ~2 x (55 + 300) beats are in flight after
// an XOFF. The receiver stalls once for long enough to trigger XOFF. Checks
// that NFC_LATENCY_COUNT reports the beats that really arrived after the XOFF
// (the testbench's own count on the core's RX port), that it lies in the
// window predicted from PG074's core latency and the channel delay, that it
// exceeds the headroom (the paper's sizing check flags the FIFO), and that
// FIFO_RX_OVERFLOW_COUNT equals the words the scoreboard found missing (order
// is kept; only loss is allowed).
module tb_fifo_small;
  `include "tb_common.svh"

  localparam int RX_DEPTH = RX_FIFO_SIZE / FIFO_WIDTH;
  localparam int PROG_FULL = RX_FIFO_PROG_FULL;
  localparam int HEADROOM_BEATS = (RX_DEPTH - PROG_FULL) * (FIFO_WIDTH / 32);
  // XOFF crosses core TX + channel + partner RX, the partner stops; what it
  // already sent crosses partner TX + channel + core RX: two one-way trips,
  // of which 32 in 33 cycles carry a beat (64b/66b gearbox)
  localparam int ROUND_TRIP = 2 * (55 + CH_DELAY) * af_kernel_pkg::GEARBOX_DATA_CYCLES /
      af_kernel_pkg::GEARBOX_PERIOD_CYCLES;

  int unsigned beats = 20000;
  longint unsigned lost = 0, next_index = 0;

  initial start_full_rate(beats);

  // receiver: ready, one long stall after 2000 beats, ready again
  initial begin
    rx_tready = 1'b1;
    wait (received == 2000);
    @(negedge ap_clk);
    rx_tready = 1'b0;
    repeat (6000) @(negedge ap_clk);
    rx_tready = 1'b1;
  end

  always @(posedge ap_clk) begin
    if (rx_tvalid && rx_tready) begin
      if (64'(rx_tdata[31:0]) < next_index)
        fail($sformatf("beat index %0d after %0d: duplicated or reordered", rx_tdata[31:0],
                       next_index));
      if (rx_tdata !== pattern(64'(rx_tdata[31:0])))
        fail($sformatf("beat %0d corrupted", rx_tdata[31:0]));
      lost += 64'(rx_tdata[31:0]) - next_index;
      next_index = 64'(rx_tdata[31:0]) + 1;
      received++;
    end
  end

  int unsigned tb_inflight = 0, tb_max_inflight = 0;
  logic tb_in_xoff = 1'b0;
  always @(posedge user_clk) begin
    if (dut.nfc_tvalid && dut.nfc_tready) begin
      tb_in_xoff = (dut.nfc_tdata == 16'hffff);
      if (tb_in_xoff && !dut.nfc_refresh) tb_inflight = 0;
    end else if (tb_in_xoff && dut.ip_rx_tvalid) begin
      tb_inflight++;
      if (tb_inflight > tb_max_inflight) tb_max_inflight = tb_inflight;
    end
  end

  initial begin
    logic [31:0] inflight_reg, overflow_reg;
    wait (sent == beats);
    repeat (5000) @(posedge ap_clk);
    settle();
    lost += beats - next_index;
    axil_read(af_kernel_pkg::REG_NFC_LATENCY_COUNT, inflight_reg);
    axil_read(af_kernel_pkg::REG_FIFO_RX_OVERFLOW_COUNT, overflow_reg);
    $display("RESULT rx_fifo=%0dB headroom_beats=%0d in_flight_reg=%0d tb_in_flight=%0d predicted=%0d overflow_reg=%0d lost_words=%0d",
             RX_FIFO_SIZE, HEADROOM_BEATS, inflight_reg, tb_max_inflight, ROUND_TRIP,
             overflow_reg, lost);
    if (inflight_reg != tb_max_inflight)
      fail($sformatf("NFC_LATENCY_COUNT %0d != %0d beats observed after XOFF", inflight_reg,
                     tb_max_inflight));
    if (int'(inflight_reg) < ROUND_TRIP - 16 || int'(inflight_reg) > ROUND_TRIP + 16)
      fail($sformatf("in-flight %0d outside the predicted %0d..%0d", inflight_reg,
                     ROUND_TRIP - 16, ROUND_TRIP + 16));
    if (int'(inflight_reg) <= HEADROOM_BEATS)
      fail("in-flight count does not exceed the headroom: the test does not exercise a small FIFO");
    if (lost == 0) fail("no words were lost although the FIFO is too small");
    if (64'(overflow_reg) != lost)
      fail($sformatf("FIFO_RX_OVERFLOW_COUNT %0d != %0d words lost", overflow_reg, lost));
    $finish;
  end

  initial watchdog(10000);
endmodule
