`timescale 1ps / 1fs
// A plain 64 B stream (no STREAM_FRAME_WORDS, the public wire format) after lost 32 B blocks:
// the receive assembly pairs 32 B halves with no boundary to realign at, so after an odd
// number of lost blocks the stream's last 32 B wait in the kernel for a pair that does not
// come. RX_PENDING_HALF (0x088) shows it. Four bursts of `words` words each, at full rate,
// with 0, 1, 1 and 3 control-field errors (VALID bit, each aimed mid-burst and waited for
// until it hit a data block), then CORE_RESET. The reference is the bench's own arithmetic
// from what it sent and the errors that hit, not the kernel: after each burst has drained,
//  - rx_axis words = (2 x words sent - blocks lost) / 2, rounded down, and nothing more;
//  - RX_PENDING_HALF = (2 x words sent - blocks lost) mod 2: 0, 1, 0, 1;
//  - SOFT_ERR_COUNT = blocks lost; the first burst's words equal what was sent;
// and after CORE_RESET (the link up again) RX_PENDING_HALF = 0.
// Plusargs: +seed=N +words=N (per burst)
module tb_pending_half;
  `include "tb_common.svh"

  // channel-word control field of a data block (aurora_sim_ip): VALID
  localparam int CH_VALID = 294;

  int unsigned words = 2000;
  longint unsigned exact = 0;

  initial begin
    if ($value$plusargs("words=%d", words)) begin end
    if (USE_FRAMING != 0 || FIFO_WIDTH != 64) fail("this bench is for a plain 64 B stream");
  end

  always @(posedge ap_clk) begin
    if (rx_tvalid && rx_tready) begin
      if (received < longint'(words) && rx_tdata !== pattern(received))
        fail($sformatf("word %0d of the error-free burst differs from what was sent", received));
      if (received < longint'(words)) exact++;
      received++;
    end
  end

  // sends one burst; `errors` control-field errors hit data blocks from its middle on
  task automatic burst(input int errors);
    longint unsigned start = sent;
    fork
      send_full_rate(start + longint'(words));
      begin
        for (int e = 0; e < errors; e++) begin
          logic [31:0] hits;
          wait (sent >= start + longint'(words) / 2 + longint'(e) * 16);
          @(negedge user_clk);
          hits = errors_injected;
          channel_error(9'(CH_VALID));
          wait (errors_injected != hits);
        end
      end
    join
    repeat (3000) @(posedge ap_clk);
    settle();
  endtask

  task automatic check(input int b);
    longint unsigned halves = 2 * sent - longint'(errors_injected);
    logic [31:0] pending;
    if (received != halves / 2)
      fail($sformatf("burst %0d: %0d words out for %0d sent and %0d 32 B blocks lost (want %0d)", b,
                     received, sent, errors_injected, halves / 2));
    axil_read(af_kernel_pkg::REG_RX_PENDING_HALF, pending);
    $display("RESULT burst=%0d words_sent=%0d blocks_lost=%0d words_received=%0d RX_PENDING_HALF=%0d",
             b, sent, errors_injected, received, pending);
    if (pending !== 32'(halves % 2))
      fail($sformatf("burst %0d: RX_PENDING_HALF=%0d with %0d halves arrived (want %0d)", b,
                     pending, halves, halves % 2));
    expect_reg(af_kernel_pkg::REG_SOFT_ERR_COUNT, errors_injected, "SOFT_ERR_COUNT");
  endtask

  initial begin
    int lost[4] = '{0, 1, 1, 3};
    logic [31:0] pending;
    reset_and_wait_link();
    rx_tready = 1'b1;
    @(negedge ap_clk);
    for (int b = 0; b < 4; b++) begin
      burst(lost[b]);
      check(b);
    end
    if (exact != longint'(words)) fail("the error-free burst was not delivered whole");
    // CORE_RESET drops the held half
    axil_write(af_kernel_pkg::REG_CORE_RESET, 32'd1);
    repeat (20) @(posedge ap_clk);
    axil_write(af_kernel_pkg::REG_CORE_RESET, 32'd0);
    repeat (20) @(posedge ap_clk);
    wait_link_up(200000);
    settle();
    axil_read(af_kernel_pkg::REG_RX_PENDING_HALF, pending);
    if (pending !== 32'd0) fail($sformatf("RX_PENDING_HALF=%0d after CORE_RESET", pending));
    $finish;
  end

  initial watchdog(100000);
endmodule
