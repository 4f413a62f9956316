`timescale 1ps / 1fs
// Full-rate streaming: the sender never pauses, the receiver never stalls.
// Checks every beat arrives intact and in order, that the steady-state rate
// is >= 99% of min(kernel-clock rate, link payload rate), that it never
// exceeds the 64b/66b payload limit, and that the core+channel latency is
// PG074's 55 user-clock cycles plus the channel delay.
// Plusargs: +ap_mhz=200|250|300 +beats=N +seed=N
module tb_stream_rate;
  `include "tb_common.svh"

  // kernel.toml [link] (af_kernel_pkg): one 32 B beat per user-clock cycle, of which the
  // gearbox's data cycles carry payload, less the clock-compensation cycles
  // (left to right, so every division is of reals)
  localparam real LINK_PAYLOAD_GBPS = USER_CLK_MHZ * 8.0 * af_kernel_pkg::LINK_BEAT_BYTES *
      af_kernel_pkg::GEARBOX_DATA_CYCLES / af_kernel_pkg::GEARBOX_PERIOD_CYCLES *
      (1.0 - 1.0 * af_kernel_pkg::CC_CYCLES / af_kernel_pkg::CC_PERIOD_CYCLES) / 1000.0;
  // upper bound: the gearbox alone (a short window may contain no clock compensation)
  localparam real GEARBOX_LIMIT_GBPS = af_kernel_pkg::LANES * af_kernel_pkg::LINE_RATE_GBPS *
      af_kernel_pkg::GEARBOX_DATA_CYCLES / af_kernel_pkg::GEARBOX_PERIOD_CYCLES;
  localparam real PG074_CORE_LATENCY = 55.0;

  int unsigned beats = 20000;
  realtime t_first, t_mark, t_last, t_tx0, t_rx0;
  longint unsigned mark_beat;

  initial begin
    if ($value$plusargs("beats=%d", beats)) begin end
  end

  // sender: tvalid held high, next beat after each handshake
  initial begin
    reset_and_wait_link();
    @(negedge ap_clk);
    tx_tdata = pattern(0);
    tx_tvalid = 1'b1;
    forever begin
      @(posedge ap_clk);
      if (tx_tvalid && tx_tready) begin
        if (sent == 0) t_tx0 = $realtime;
        sent++;
        @(negedge ap_clk);
        if (sent == beats) tx_tvalid = 1'b0;
        else tx_tdata = pattern(sent);
      end
    end
  end

  // receiver: always ready, scoreboard
  initial begin
    rx_tready = 1'b1;
    mark_beat = beats / 10;
    forever begin
      @(posedge ap_clk);
      if (rx_tvalid && rx_tready) begin
        if (rx_tdata !== pattern(received))
          fail($sformatf("beat %0d: got index %0d / corrupted data", received, rx_tdata[31:0]));
        if (received == 0) t_rx0 = $realtime;
        if (received == mark_beat) t_mark = $realtime;
        received++;
        if (received == beats) begin
          t_last = $realtime;
          report();
          $finish;
        end
      end
    end
  end

  // core + channel latency in user-clock cycles: first TX fire -> first RX valid
  longint unsigned c_tx = 0, c_rx = 0;
  logic seen_tx = 1'b0, seen_rx = 1'b0;
  always @(posedge user_clk) begin
    if (!seen_tx && dut.ip_tx_tvalid && dut.ip_tx_tready) begin
      seen_tx <= 1'b1;
      c_tx <= user_cycles;
    end
    if (!seen_rx && dut.ip_rx_tvalid) begin
      seen_rx <= 1'b1;
      c_rx <= user_cycles;
    end
  end

  task automatic report();
    real gbps, expect_gbps, ap_gbps, lat_ns;
    longint unsigned core_lat;
    gbps = real'(beats - 1 - mark_beat) * real'(DW) / ((t_last - t_mark) / 1ns);
    ap_gbps = real'(ap_mhz) * real'(DW) / 1000.0;
    expect_gbps = (ap_gbps < LINK_PAYLOAD_GBPS) ? ap_gbps : LINK_PAYLOAD_GBPS;
    lat_ns = (t_rx0 - t_tx0) / 1ns;
    core_lat = c_rx - c_tx;
    $display("RESULT width=%0d ap_mhz=%0d beats=%0d throughput_gbps=%.3f expected_gbps=%.3f link_payload_gbps=%.3f first_beat_latency_ns=%.1f core_channel_cycles=%0d",
             FIFO_WIDTH, ap_mhz, beats, gbps, expect_gbps, LINK_PAYLOAD_GBPS, lat_ns, core_lat);
    if (gbps < 0.99 * expect_gbps)
      fail($sformatf("throughput %.3f Gbit/s below 99%% of %.3f", gbps, expect_gbps));
    if (gbps > GEARBOX_LIMIT_GBPS * 1.001)
      fail($sformatf("throughput %.3f Gbit/s above the 64b/66b payload limit %.3f", gbps,
                     GEARBOX_LIMIT_GBPS));
    if (real'(core_lat) != PG074_CORE_LATENCY + real'(CH_DELAY))
      fail($sformatf("core+channel latency %0d cycles, expected %0.0f + %0d", core_lat,
                     PG074_CORE_LATENCY, CH_DELAY));
  endtask

  initial watchdog(5000);
endmodule
