`timescale 1ps / 1ps
// One direction of the serial channel between two simulated Aurora cores:
// cable/switch latency in link-clock cycles of the sender (DELAY), bit errors,
// link drop (no light: the far end loses its lanes) and restore, and, with
// ASYNC = 1, a receiver on its own clock (`rx_clk`, a few ppm off the
// sender's) behind an elastic buffer that does what the core's clock
// compensation does: when it runs full it drops a clock-compensation word
// (CH_CC, sent 8 in every 10 000 cycles, i.e. 800 ppm of slack), when it runs
// empty the receiver sees an idle. A data or NFC word that finds the buffer
// full is lost and counted in `words_lost` (a test must see 0).
// An error flips bit `error_bit` of the next word it can hit: an NFC word for
// the NFC fields, a frame's last word for the CRC/length/last fields, a
// clock-compensation word for CH_CC, else the next data word.
module aurora_sim_channel #(
    parameter int CH_W     = 302,
    parameter int DELAY    = 64,
    parameter int ASYNC    = 0,
    parameter int EB_DEPTH = 8,
    parameter int EB_HIGH  = 4
) (
    input  logic            clk,
    input  logic            rx_clk,        // ASYNC only
    input  logic            link_ok,
    input  logic            inject_error,  // pulse: corrupt the next word error_bit can hit
    input  logic [8:0]      error_bit,     // which channel-word bit to flip
    input  logic [CH_W-1:0] ch_in,
    output logic [CH_W-1:0] ch_out,
    output logic [31:0]     errors_injected,
    output logic [31:0]     words_lost
);
  localparam int CH_CRC = 256, CH_LAST = 293, CH_VALID = 294, CH_NFC_VALID = 295;
  localparam int CH_NFC_XOFF = 296, CH_LANES_UP = 297, CH_LIGHT = 298, CH_CC = 299;
  logic            pending = 1'b0;
  logic [8:0]      pending_bit = '0;
  logic            hit;
  logic [CH_W-1:0] wire_in, line_q;

  initial errors_injected = '0;
  initial words_lost = '0;

  always_comb begin
    if (pending_bit == 9'(CH_NFC_VALID) || pending_bit == 9'(CH_NFC_XOFF)) hit = ch_in[CH_NFC_VALID];
    else if (pending_bit >= 9'(CH_CRC) && pending_bit <= 9'(CH_LAST)) hit = ch_in[CH_LAST];
    else if (pending_bit == 9'(CH_CC)) hit = ch_in[CH_CC];
    else hit = ch_in[CH_VALID];
    hit = hit && pending && link_ok;
    wire_in = link_ok ? ch_in : '0;
    if (hit) wire_in[pending_bit] = !ch_in[pending_bit];
  end

  always_ff @(posedge clk) begin
    if (inject_error) begin
      pending <= 1'b1;
      pending_bit <= error_bit;
    end else if (hit) begin
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
      .q  (line_q)
  );

  if (ASYNC == 0) begin : g_sync
    /* verilator lint_off UNUSEDSIGNAL */
    logic unused_rx_clk;
    /* verilator lint_on UNUSEDSIGNAL */
    assign unused_rx_clk = rx_clk;
    assign ch_out = line_q;
  end else begin : g_elastic
    logic [CH_W-1:0] eb[EB_DEPTH];
    int unsigned wr_n = 0, rd_n = 0;  // words written / read so far (each side owns one)
    logic [1:0] status = '0;          // light, lanes up: held while idles are inserted

    // behavioural model of a dual-clock buffer: each side updates its counter at once so the
    // other side sees it on its next edge (no synthesis meaning)
    /* verilator lint_off BLKSEQ */
    always @(posedge clk) begin
      int unsigned fill;
      fill = wr_n - rd_n;
      if (line_q[CH_CC] && fill >= EB_HIGH) begin
        // clock compensation: this CC word is not needed
      end else if (fill >= EB_DEPTH) begin
        if (line_q[CH_VALID] || line_q[CH_NFC_VALID]) words_lost <= words_lost + 1'b1;
      end else begin
        eb[wr_n % EB_DEPTH] = line_q;
        wr_n = wr_n + 1;
      end
    end

    always @(posedge rx_clk) begin
      if (wr_n != rd_n) begin
        ch_out <= eb[rd_n % EB_DEPTH];
        status <= {eb[rd_n % EB_DEPTH][CH_LIGHT], eb[rd_n % EB_DEPTH][CH_LANES_UP]};
        rd_n = rd_n + 1;
      end else begin
        ch_out <= '0;
        ch_out[CH_LIGHT] <= status[1];
        ch_out[CH_LANES_UP] <= status[0];
      end
    end
    /* verilator lint_on BLKSEQ */
  end
endmodule
