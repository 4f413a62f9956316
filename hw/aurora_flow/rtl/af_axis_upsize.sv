`timescale 1ps / 1ps
// 32 B -> 64 B beat assembler on the link clock. The Aurora RX side cannot be
// stalled, so there is no ready: a pair of link beats becomes one output
// beat. In framing mode a frame that ends on the first half is emitted at
// once (upper half invalid), so every frame starts on a word boundary: after
// a 32 B block lost to a control-field error the pairing is right again from
// the next frame on (aurora_flow.sv counts it). `flush` drops a half-assembled beat when the
// channel goes down, so stale data never pairs with data of a new session. `holding` is 1
// while an unpaired half waits (on a plain stream after an odd number of lost blocks, the
// stream's last 32 B: aurora_flow shows it in RX_PENDING_HALF).
module af_axis_upsize #(
    parameter bit FRAMING = 1'b0
) (
    input  logic         clk,
    input  logic         rst_n,
    input  logic         flush,
    input  logic         s_valid,
    input  logic [255:0] s_data,
    input  logic         s_last,
    input  logic [4:0]   s_nbytes_m1,  // valid bytes - 1, meaningful with s_last
    output logic         m_valid,
    output logic [511:0] m_data,
    output logic         m_last,
    output logic [5:0]   m_nbytes_m1,
    output logic         holding
);
  logic         have_half;
  logic [255:0] half;
  assign holding = have_half;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      have_half   <= 1'b0;
      half        <= '0;
      m_valid     <= 1'b0;
      m_data      <= '0;
      m_last      <= 1'b0;
      m_nbytes_m1 <= '0;
    end else begin
      m_valid <= 1'b0;
      if (flush) begin
        have_half <= 1'b0;
      end else if (s_valid) begin
        if (have_half) begin
          have_half   <= 1'b0;
          m_valid     <= 1'b1;
          m_data      <= {s_data, half};
          m_last      <= FRAMING && s_last;
          m_nbytes_m1 <= (FRAMING && s_last) ? {1'b1, s_nbytes_m1} : 6'd63;
        end else if (FRAMING && s_last) begin
          m_valid     <= 1'b1;
          m_data      <= {256'b0, s_data};
          m_last      <= 1'b1;
          m_nbytes_m1 <= {1'b0, s_nbytes_m1};
        end else begin
          have_half <= 1'b1;
          half      <= s_data;
        end
      end
    end
  end
endmodule
