`timescale 1ps / 1fs
// Benchmark harness: for each message size 64 B .. 1 MiB, send one message
// over an idle looped-back link (back-to-back beats, receiver always ready)
// and report the time from the first beat entering tx_axis to the first and
// to the last beat leaving rx_axis. In framing mode messages are cut into
// frames of at most FRAME_BEATS beats (the public test's default frame_size).
// Plusargs: +ap_mhz=N +max_bytes=N
module tb_bench;
  `include "tb_common.svh"
  // the public test's default frame_size (framing mode)
  parameter int FRAME_BEATS = 128;

  int unsigned max_bytes = 1048576;
  longint unsigned msg_beats = 0, msg_base = 0;
  realtime t_tx_first, t_rx_first, t_rx_last;

  initial begin
    if ($value$plusargs("max_bytes=%d", max_bytes)) begin end
  end

  always @(posedge ap_clk) begin
    if (rx_tvalid && rx_tready) begin
      if (rx_tdata !== pattern(received)) fail($sformatf("beat %0d corrupted", received));
      if (received == msg_base) t_rx_first = $realtime;
      received++;
      if (received == msg_base + msg_beats) t_rx_last = $realtime;
    end
  end

  initial begin
    logic fire;
    rx_tready = 1'b1;
    reset_and_wait_link();
    repeat (200) @(posedge ap_clk);
    for (longint unsigned bytes = FIFO_WIDTH; bytes <= max_bytes; bytes *= 2) begin
      longint unsigned base = sent;
      msg_base = sent;
      msg_beats = bytes / FIFO_WIDTH;
      @(negedge ap_clk);
      tx_tdata = pattern(sent);
      tx_tlast = (USE_FRAMING != 0) && (msg_beats == 1 || FRAME_BEATS == 1);
      tx_tvalid = 1'b1;
      while (sent < base + msg_beats) begin
        @(posedge ap_clk);
        fire = tx_tvalid && tx_tready;
        if (fire && sent == base) t_tx_first = $realtime;
        @(negedge ap_clk);
        if (fire) begin
          sent++;
          if (sent == base + msg_beats) tx_tvalid = 1'b0;
          else begin
            tx_tdata = pattern(sent);
            tx_tlast = (USE_FRAMING != 0) &&
                ((sent - base + 1) % FRAME_BEATS == 0 || sent == base + msg_beats - 1);
          end
        end
      end
      while (received < sent) @(posedge ap_clk);
      $display("RESULT framing=%0d width=%0d ap_mhz=%0d bytes=%0d first_ns=%.2f last_ns=%.2f",
               USE_FRAMING, FIFO_WIDTH, ap_mhz, bytes, (t_rx_first - t_tx_first) / 1ns,
               (t_rx_last - t_tx_first) / 1ns);
      repeat (500) @(posedge ap_clk);
    end
    $finish;
  end

  initial watchdog(10000);
endmodule
