`timescale 1ps / 1ps
// 64 B -> 32 B splitter on the link clock: the low half goes first. In
// framing mode a last beat with at most 32 valid bytes is sent as one half.
// `flush` (channel down) drops the unsent high half of a split word: its low
// half is lost with the link, and the receiver restarts pairing at a word
// boundary, so sending the high half later would misalign every word.
module af_axis_downsize #(
    parameter bit FRAMING = 1'b0
) (
    input  logic         clk,
    input  logic         rst_n,
    input  logic         flush,
    input  logic         s_valid,
    output logic         s_ready,
    input  logic [511:0] s_data,
    input  logic         s_last,
    input  logic [5:0]   s_nbytes_m1,
    output logic         m_valid,
    input  logic         m_ready,
    output logic [255:0] m_data,
    output logic         m_last,
    output logic [4:0]   m_nbytes_m1
);
  logic high;  // the low half of the current word has been sent
  logic short_last;

  assign short_last  = FRAMING && s_last && !s_nbytes_m1[5];
  assign m_valid     = s_valid;
  assign m_data      = high ? s_data[511:256] : s_data[255:0];
  assign m_last      = FRAMING && s_last && (high || short_last);
  assign m_nbytes_m1 = s_nbytes_m1[4:0];
  assign s_ready     = (flush && high) || (m_ready && (high || short_last));

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) high <= 1'b0;
    else if (flush) high <= 1'b0;
    else if (s_valid && m_ready) high <= !(high || short_last);
  end
endmodule
