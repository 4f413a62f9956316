`timescale 1ps / 1ps
// Two-flop synchronizer for single bits or Gray-coded vectors (each bit
// changes at most once per source update, so a plain per-bit sync is safe).
module af_sync #(
    parameter int WIDTH = 1,
    parameter logic [WIDTH-1:0] RESET_VALUE = '0
) (
    input  logic             clk,
    input  logic             rst_n,
    input  logic [WIDTH-1:0] d,
    output logic [WIDTH-1:0] q
);
  (* ASYNC_REG = "TRUE" *) logic [WIDTH-1:0] meta;
  (* ASYNC_REG = "TRUE" *) logic [WIDTH-1:0] sync;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      meta <= RESET_VALUE;
      sync <= RESET_VALUE;
    end else begin
      meta <= d;
      sync <= meta;
    end
  end

  assign q = sync;
endmodule
