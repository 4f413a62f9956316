`timescale 1ps / 1ps
// Coherent transfer of a wide word (status + counters) between clock domains
// with a toggle handshake: the source holds a snapshot stable until the
// destination has captured it, so every bit of a read belongs to the same
// source cycle. A new snapshot is taken every round trip (~6 cycles).
module af_cdc_bundle #(
    parameter int WIDTH = 32
) (
    input  logic             src_clk,
    input  logic             src_rst_n,
    input  logic [WIDTH-1:0] src_data,
    input  logic             dst_clk,
    input  logic             dst_rst_n,
    output logic [WIDTH-1:0] dst_data
);
  logic             req, ack_s, req_d, seen;
  logic [WIDTH-1:0] hold;

  always_ff @(posedge src_clk or negedge src_rst_n) begin
    if (!src_rst_n) begin
      req  <= 1'b0;
      hold <= '0;
    end else if (req == ack_s) begin
      hold <= src_data;
      req  <= !req;
    end
  end

  af_sync u_req (
      .clk  (dst_clk),
      .rst_n(dst_rst_n),
      .d    (req),
      .q    (req_d)
  );

  always_ff @(posedge dst_clk or negedge dst_rst_n) begin
    if (!dst_rst_n) begin
      seen     <= 1'b0;
      dst_data <= '0;
    end else if (req_d != seen) begin
      seen     <= req_d;
      dst_data <= hold;
    end
  end

  af_sync u_ack (
      .clk  (src_clk),
      .rst_n(src_rst_n),
      .d    (seen),
      .q    (ack_s)
  );
endmodule
