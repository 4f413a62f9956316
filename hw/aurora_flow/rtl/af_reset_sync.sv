`timescale 1ps / 1ps
// Asynchronous assertion, synchronous release: every domain leaves reset on
// its own clock edge, so no flop sees a release that violates recovery time.
module af_reset_sync (
    input  logic clk,
    input  logic arst_n,
    output logic rst_n
);
  (* ASYNC_REG = "TRUE" *) logic [1:0] stages;

  always_ff @(posedge clk or negedge arst_n) begin
    if (!arst_n) stages <= 2'b00;
    else stages <= {stages[0], 1'b1};
  end

  assign rst_n = stages[1];
endmodule
