`timescale 1ps / 1ps
`include "af_refuse.svh"
// Reset sequence for the Aurora core on the free-running init clock: while
// the kernel is in (soft) reset both pma_init and reset_pb are asserted;
// afterwards pma_init is released PB_DELAY cycles before reset_pb, as PG074
// asks (transceivers first, then the core logic). The default hold time,
// 2^27 cycles (~1.34 s at 100 MHz), matches the public kernel; simulations
// shorten it.
module af_ip_reset #(
    parameter int RESET_CYCLES = 134217727,
    parameter int PB_DELAY     = 255
) (
    input  logic init_clk,
    input  logic arst_n,
    output logic reset_pb,
    output logic pma_init
);
  if (RESET_CYCLES <= PB_DELAY) begin : g_bad_cycles
    `AF_REFUSE(("af_ip_reset: RESET_CYCLES=%0d must exceed PB_DELAY=%0d", RESET_CYCLES, PB_DELAY))
  end

  localparam int CW = $clog2(RESET_CYCLES + 1);
  logic rst_n;
  logic [CW-1:0] count;

  af_reset_sync u_sync (
      .clk   (init_clk),
      .arst_n(arst_n),
      .rst_n (rst_n)
  );

  always_ff @(posedge init_clk or negedge rst_n) begin
    if (!rst_n) begin
      count    <= '0;
      reset_pb <= 1'b1;
      pma_init <= 1'b1;
    end else begin
      if (count != CW'(RESET_CYCLES)) count <= count + 1'b1;
      if (count == CW'(RESET_CYCLES - PB_DELAY)) pma_init <= 1'b0;
      if (count == CW'(RESET_CYCLES)) reset_pb <= 1'b0;
    end
  end
endmodule
