`timescale 1ps / 1ps
// One direction of the serial channel between two simulated Aurora cores:
// cable/switch latency in link-clock cycles, optional single-bit errors in
// the payload of the next data block, and link drop (no light: the far end
// loses its lanes) and restore.
module aurora_sim_channel #(
    parameter int CH_W  = 299,
    parameter int DELAY = 64
) (
    input  logic            clk,
    input  logic            link_ok,
    input  logic            inject_error,  // pulse: corrupt the next data block
    input  logic [7:0]      error_bit,     // which payload bit to flip
    input  logic [CH_W-1:0] ch_in,
    output logic [CH_W-1:0] ch_out,
    output logic [31:0]     errors_injected
);
  localparam int VALID_BIT = 294;
  logic            pending = 1'b0;
  logic [CH_W-1:0] wire_in;

  initial errors_injected = '0;

  always_comb begin
    wire_in = link_ok ? ch_in : '0;
    if (pending && link_ok && ch_in[VALID_BIT]) wire_in[{1'b0, error_bit}] = !ch_in[{1'b0, error_bit}];
  end

  always_ff @(posedge clk) begin
    if (inject_error) pending <= 1'b1;
    else if (pending && link_ok && ch_in[VALID_BIT]) begin
      pending <= 1'b0;
      errors_injected <= errors_injected + 1'b1;
    end
  end

  af_delay_line #(
      .WIDTH(CH_W),
      .DELAY(DELAY)
  ) u_line (
      .clk(clk),
      .d  (wire_in),
      .q  (ch_out)
  );
endmodule
