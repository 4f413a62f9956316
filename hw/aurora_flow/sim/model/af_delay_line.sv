`timescale 1ps / 1ps
// Fixed-latency delay line as a ring buffer: `q` shows `d` exactly DELAY
// cycles later (DELAY >= 1). Cheaper to simulate than a shift register.
module af_delay_line #(
    parameter int WIDTH = 8,
    parameter int DELAY = 1
) (
    input  logic             clk,
    input  logic [WIDTH-1:0] d,
    output logic [WIDTH-1:0] q
);
  if (DELAY < 1) begin : g_bad_delay
`ifndef __ICARUS__
    $fatal(1, "af_delay_line: DELAY=%0d: must be at least 1", DELAY);
`endif
  end

  if (DELAY == 1) begin : g_reg
    always_ff @(posedge clk) q <= d;
  end else begin : g_ring
    localparam int N = DELAY - 1;
    localparam int PW = (N > 1) ? $clog2(N) : 1;
    logic [WIDTH-1:0] ring[N];
    logic [PW-1:0] ptr = '0;
    initial for (int i = 0; i < N; i++) ring[i] = '0;
    always_ff @(posedge clk) begin
      q <= ring[ptr];
      ring[ptr] <= d;
      ptr <= (ptr == PW'(N - 1)) ? '0 : ptr + 1'b1;
    end
  end
endmodule
