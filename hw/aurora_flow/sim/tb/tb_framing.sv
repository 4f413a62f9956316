`timescale 1ps / 1fs
// Framing mode (TLAST + CRC-32): random frame lengths and random valid-byte
// counts in the last beat, a receiver with short random stalls, and single
// bit errors injected into the channel at random times. Checks against the
// testbench's record of what it sent: TLAST/TKEEP boundaries preserved,
// valid bytes intact except where an error was injected,
// FRAMES_RECEIVED = frames sent, FRAMES_WITH_ERRORS = frames the scoreboard
// found corrupted (each injected error that hit payload is flagged).
// Plusargs: +seed=N +beats=N +errors=0|1
`define AF_TB_FRAMING
module tb_framing;
  `include "tb_common.svh"

  int unsigned beats = 50000;
  int unsigned with_errors = 1;
  int unsigned crc_errors = 0;  // +crc_errors=1: errors in the CRC field instead of the payload
  int unsigned frames_rx = 0, frames_bad = 0;
  logic [63:0] rng;

  initial begin
    if ($value$plusargs("beats=%d", beats)) begin end
    if ($value$plusargs("errors=%d", with_errors)) begin end
    if ($value$plusargs("crc_errors=%d", crc_errors)) begin end
    rng = 64'hD1B54A32D192ED03 ^ 64'(seed) * 64'hBF58476D1CE4E5B9;
  end

  // sender: frames of 1..64 words with TLAST (tb_common's framed sender)
  initial begin
    tx_rng = 64'h94D049BB133111EB ^ 64'(seed) * 64'hD1B54A32D192ED03;
    reset_and_wait_link();
    send_framed(beats, 64, 1'b1);
  end

  // receiver with short random stalls
  always @(negedge ap_clk) begin
    rng = xorshift(rng);
    rx_tready = (rng[2:0] != 0);
  end

  logic frame_bad = 1'b0;
  always @(posedge ap_clk) begin
    if (rx_tvalid && rx_tready) begin
      logic last;
      logic [FIFO_WIDTH-1:0] keep;
      logic [DW-1:0] data;
      int nbytes;
      if (sent_last.size() == 0) fail("received a beat that was never sent");
      last = sent_last.pop_front();
      nbytes = sent_nbytes.pop_front();
      for (int b = 0; b < FIFO_WIDTH; b++) keep[b] = (b < nbytes);
      data = pattern(received);
      if (rx_tlast !== last)
        fail($sformatf("beat %0d: TLAST %0b, sent %0b", received, rx_tlast, last));
      if (rx_tlast && rx_tkeep !== keep)
        fail($sformatf("beat %0d: TKEEP %h, sent %h", received, rx_tkeep, keep));
      for (int b = 0; b < FIFO_WIDTH; b++)
        if (keep[b] && rx_tdata[8*b+:8] !== data[8*b+:8]) frame_bad = 1'b1;
      if (rx_tlast) begin
        frames_rx++;
        if (frame_bad) frames_bad++;
        frame_bad = 1'b0;
      end
      received++;
    end
  end

  // bit errors: one every 2000..10000 link cycles, at a random payload bit
  initial begin
    if (with_errors != 0 || crc_errors != 0) begin
      wait (sent > 0);
      forever begin
        rng = xorshift(rng);
        repeat (2000 + int'(rng[12:0])) @(negedge user_clk);
        // a payload bit, or a bit of the frame's CRC (channel word bits 256..287)
        channel_error(crc_errors != 0 ? 9'd256 + 9'(rng[24:20]) : {1'b0, rng[27:20]});
      end
    end
  end

  initial begin
    wait (sent >= beats && left_in_frame == 0);
    while (received < sent) @(posedge ap_clk);
    repeat (200) @(posedge ap_clk);
    settle();
    $display("RESULT seed=%0d width=%0d beats=%0d ppm=%0d ch_delay=%0d frames=%0d injected=%0d crc_field=%0d corrupted_frames=%0d",
             seed, FIFO_WIDTH, received, ppm, CH_DELAY, frames_sent, errors_injected, crc_errors,
             frames_bad);
    expect_reg(af_kernel_pkg::REG_FRAMES_RECEIVED, frames_sent, "FRAMES_RECEIVED");
    // a corrupted CRC field spoils no data but must still flag its frame
    expect_reg(af_kernel_pkg::REG_FRAMES_WITH_ERRORS, frames_bad + (crc_errors != 0 ? errors_injected : 0),
               "FRAMES_WITH_ERRORS");
    if (crc_errors != 0 && (with_errors != 0 || errors_injected == 0 || frames_bad != 0))
      fail("+crc_errors=1 runs with +errors=0, must inject and must not corrupt data");
    if (frames_rx != frames_sent) fail("frame count mismatch at the user side");
    if (with_errors != 0 && frames_bad == 0) fail("no injected error reached payload bytes");
    expect_reg(af_kernel_pkg::REG_SOFT_ERR_COUNT, 0, "SOFT_ERR_COUNT (payload/CRC errors are not control-block errors)");
    if (frames_bad > errors_injected) fail("more corrupted frames than injected errors");
    $finish;
  end

  initial watchdog(20000);
endmodule

