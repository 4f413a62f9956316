`timescale 1ps / 1ps
`include "af_refuse.svh"
// Dual-clock FIFO with Gray-coded pointers and first-word-fall-through output.
// The memory is read through a registered stage so synthesis maps it to block
// RAM; that stage adds one word of capacity (DEPTH + 1 words in total).
// Both sides export their view of the fill level, from which the caller
// derives programmable full/empty flags in whichever domain needs them.
module af_async_fifo #(
    parameter int WIDTH = 8,
    parameter int DEPTH = 16,
    localparam int AW = $clog2(DEPTH)
) (
    input  logic             wr_clk,
    input  logic             wr_rst_n,
    input  logic [WIDTH-1:0] s_data,
    input  logic             s_valid,
    output logic             s_ready,
    output logic [AW:0]      wr_level,

    input  logic             rd_clk,
    input  logic             rd_rst_n,
    output logic [WIDTH-1:0] m_data,
    output logic             m_valid,
    input  logic             m_ready,
    output logic [AW:0]      rd_level
);
  if ((1 << AW) != DEPTH || DEPTH < 4) begin : g_bad_depth
    `AF_REFUSE(("af_async_fifo: DEPTH=%0d: must be a power of two and at least 4", DEPTH))
  end

  function automatic logic [AW:0] bin2gray(input logic [AW:0] b);
    bin2gray = b ^ (b >> 1);
  endfunction

  function automatic logic [AW:0] gray2bin(input logic [AW:0] g);
    for (int i = 0; i <= AW; i++) gray2bin[i] = ^(g >> i);
  endfunction

  logic [WIDTH-1:0] mem[DEPTH];

  // write domain
  logic [AW:0] wbin, wgray, rgray_w, rbin_w;
  af_sync #(.WIDTH(AW + 1)) u_sync_rgray (
      .clk  (wr_clk),
      .rst_n(wr_rst_n),
      .d    (rgray),
      .q    (rgray_w)
  );
  assign rbin_w   = gray2bin(rgray_w);
  assign wr_level = wbin - rbin_w;
  assign s_ready  = wr_rst_n && (wr_level != (AW + 1)'(DEPTH));

  always_ff @(posedge wr_clk) begin
    if (s_valid && s_ready) mem[wbin[AW-1:0]] <= s_data;
  end

  always_ff @(posedge wr_clk or negedge wr_rst_n) begin
    if (!wr_rst_n) begin
      wbin  <= '0;
      wgray <= '0;
    end else if (s_valid && s_ready) begin
      wbin  <= wbin + 1'b1;
      wgray <= bin2gray(wbin + 1'b1);
    end
  end

  // read domain
  logic [AW:0] rbin, rgray, wgray_r, wbin_r;
  logic load;
  af_sync #(.WIDTH(AW + 1)) u_sync_wgray (
      .clk  (rd_clk),
      .rst_n(rd_rst_n),
      .d    (wgray),
      .q    (wgray_r)
  );
  assign wbin_r = gray2bin(wgray_r);
  assign load = (wbin_r != rbin) && (!m_valid || m_ready);
  assign rd_level = (wbin_r - rbin) + {{AW{1'b0}}, m_valid};

  always_ff @(posedge rd_clk) begin
    if (load) m_data <= mem[rbin[AW-1:0]];
  end

  always_ff @(posedge rd_clk or negedge rd_rst_n) begin
    if (!rd_rst_n) begin
      rbin    <= '0;
      rgray   <= '0;
      m_valid <= 1'b0;
    end else begin
      if (load) begin
        rbin  <= rbin + 1'b1;
        rgray <= bin2gray(rbin + 1'b1);
      end
      m_valid <= load || (m_valid && !m_ready);
    end
  end
endmodule
