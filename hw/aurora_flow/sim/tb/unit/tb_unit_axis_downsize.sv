`timescale 1ps / 1fs
// af_axis_downsize (64 B -> 32 B on the link clock) on its own, FRAMING 0 and 1 side by side,
// with random words offered at random times (held until taken, as AXI-Stream asks), a
// random ready on the output, random frame lengths and last-word byte counts, flushes
// (channel down: the core is not ready then) and a reset. The reference splits each word
// the testbench offers as the module's header comment says:
//  - the low half first, then the high half; FRAMING = 1: a frame's last word with at most
//    32 valid bytes (s_nbytes_m1 < 32) is one half; m_last on the frame's last half, with
//    m_nbytes_m1 = the valid bytes of that half - 1; FRAMING = 0: always two halves,
//    m_last = 0 (s_last and s_nbytes_m1 ignored);
//  - m_valid whenever a word is offered, m_data = the half due (so it holds while it waits);
//  - the word is taken (s_ready) exactly at the handshake of its last half, never earlier;
//  - flush drops the high half of a word whose low half went out: that word is taken at
//    the flush, and its high half never appears; a word with no half out is kept whole.
// Plusargs: +seed=N +words=N (per configuration)

module af_axis_downsize_check #(
    parameter bit FRAMING = 1'b0
) (
    input  logic clk,
    output logic done
);
  `include "unit_common.svh"

  logic rst_n = 1'b0, flush = 1'b0, s_valid = 1'b0, s_last = 1'b0, m_ready = 1'b0;
  logic [511:0] s_data = '0;
  logic [5:0] s_nbytes_m1 = '0;
  logic s_ready, m_valid, m_last;
  logic [255:0] m_data;
  logic [4:0] m_nbytes_m1;

  af_axis_downsize #(.FRAMING(FRAMING)) dut (
      .clk        (clk),
      .rst_n      (rst_n),
      .flush      (flush),
      .s_valid    (s_valid),
      .s_ready    (s_ready),
      .s_data     (s_data),
      .s_last     (s_last),
      .s_nbytes_m1(s_nbytes_m1),
      .m_valid    (m_valid),
      .m_ready    (m_ready),
      .m_data     (m_data),
      .m_last     (m_last),
      .m_nbytes_m1(m_nbytes_m1)
  );

  typedef struct packed {
    logic [255:0] data;
    logic last;  // the frame's last half (FRAMING = 1)
    logic [4:0] nbytes_m1;  // meaningful with last
    logic final_half;  // the word's last half: the word is taken with it
    logic high;  // the high half of a split word
  } half_t;
  half_t want[$];  // the halves of the word on offer not yet out
  longint unsigned words_taken = 0, halves_out = 0, frames = 0, flushes = 0, dropped_highs = 0;
  longint unsigned short_lasts = 0;
  int unsigned words = 30000;
  logic [63:0] gen_rng, data_rng;

  initial begin
    done = 1'b0;
    if ($value$plusargs("words=%d", words)) begin end
    gen_rng = rng_start(FRAMING * 4 + 11);
    data_rng = rng_start(FRAMING * 4 + 12);
  end

  function automatic logic [511:0] random_word();
    logic [511:0] d;
    for (int i = 0; i < 8; i++) begin
      data_rng = xorshift(data_rng);
      d[64*i+:64] = data_rng;
    end
    return d;
  endfunction

  // the word on offer, split by the reference
  task automatic offer(input logic [511:0] d, input logic last, input logic [5:0] nb);
    half_t lo, hi;
    logic one_half;
    one_half = FRAMING && last && nb < 32;
    lo.data = d[255:0];
    lo.last = FRAMING && last && one_half;
    lo.nbytes_m1 = nb[4:0];
    lo.final_half = one_half;
    lo.high = 1'b0;
    want.push_back(lo);
    if (!one_half) begin
      hi.data = d[511:256];
      hi.last = FRAMING && last;
      hi.nbytes_m1 = 5'(nb - 6'd32);
      hi.final_half = 1'b1;
      hi.high = 1'b1;
      want.push_back(hi);
    end
    s_valid <= 1'b1;
    s_data <= d;
    s_last <= last;
    s_nbytes_m1 <= nb;
  endtask

  // one process: checks the values before this edge, then drives the next cycle (so the
  // output's ready can follow the flush decision)
  int frame_left = 0, density = 100, ready_pct = 100, flush_left = 0;
  half_t h;
  always @(posedge clk) begin
    logic taken, sent, last;
    logic [5:0] nb;
    taken = 1'b0;
    if (!rst_n) begin
      want.delete();
      s_valid <= 1'b0;
      m_ready <= 1'b0;
      flush <= 1'b0;
    end else begin
      // ---- check ----
      if (m_valid !== s_valid) fail($sformatf("m_valid %0d with s_valid %0d", m_valid, s_valid));
      sent = m_valid && m_ready;
      if (s_valid) begin
        if (want.size() == 0) fail("a word on offer with no half left to send");
        h = want[0];
        if (m_data !== h.data)
          fail($sformatf("half %0d (%s): data\n  %h\nexpected\n  %h", halves_out, h.high ? "high" : "low",
                         m_data, h.data));
        if (FRAMING && m_last !== h.last) fail($sformatf("half %0d: m_last %0d, expected %0d", halves_out, m_last, h.last));
        if (!FRAMING && m_last !== 1'b0) fail("m_last in streaming mode");
        if (FRAMING && h.last && m_nbytes_m1 !== h.nbytes_m1)
          fail($sformatf("half %0d: m_nbytes_m1 %0d on the frame's last half, expected %0d", halves_out,
                         m_nbytes_m1, h.nbytes_m1));
        if (flush && h.high) begin
          // the low half went out before the channel went down: the word is given up
          if (!s_ready) fail("flush with a split word: the word was not taken");
          want.delete();
          dropped_highs++;
          taken = 1'b1;
        end else if (sent) begin
          if (s_ready !== h.final_half)
            fail($sformatf("half %0d: s_ready %0d at the handshake of the word's %s half", halves_out, s_ready,
                           h.final_half ? "last" : "first"));
          want.delete(0);
          halves_out++;
          taken = h.final_half;
        end else if (s_ready) fail($sformatf("s_ready %0d without a half sent (flush %0d)", s_ready, flush));
      end
      if (taken) begin
        words_taken++;
        if (want.size() != 0) fail("the word was taken with a half still to send");
      end
      // ---- drive ----
      gen_rng = xorshift(gen_rng);
      if (flush_left > 0) flush_left--;
      else if (below(gen_rng, 500) == 0) begin
        gen_rng = xorshift(gen_rng);
        flush_left = 1 + below(gen_rng, 4);
        flushes++;
      end
      flush <= flush_left > 0;
      gen_rng = xorshift(gen_rng);
      if (below(gen_rng, 200) == 0) begin
        gen_rng = xorshift(gen_rng);
        density = below(gen_rng, 3) == 0 ? 100 : 10 + below(gen_rng, 90);
        gen_rng = xorshift(gen_rng);
        ready_pct = below(gen_rng, 3) == 0 ? 100 : 10 + below(gen_rng, 90);
      end
      gen_rng = xorshift(gen_rng);
      // a core whose channel is down is not ready
      m_ready <= flush_left == 0 && below(gen_rng, 100) < ready_pct;
      if (taken || !s_valid) begin
        gen_rng = xorshift(gen_rng);
        if (words_taken < words && below(gen_rng, 100) < density) begin
          if (frame_left == 0) begin
            gen_rng = xorshift(gen_rng);
            frame_left = 1 + below(gen_rng, 5);
            frames++;
          end
          gen_rng = xorshift(gen_rng);
          nb = gen_rng[5:0];
          last = FRAMING ? frame_left == 1 : gen_rng[8];
          frame_left--;
          if (FRAMING && last && nb < 32) short_lasts++;
          offer(random_word(), last, nb);
        end else s_valid <= 1'b0;
      end
    end
  end

  initial begin
    // a reset in mid-stream: the word on offer is withdrawn
    `AF_UNIT_RESET_MID_STREAM(words_taken, words, FRAMING * 4 + 13, )
    wait (words_taken >= words && !s_valid);
    repeat (4) @(negedge clk);
    if (flushes == 0 || dropped_highs == 0 || (FRAMING && short_lasts == 0))
      fail($sformatf("coverage: %0d flushes, %0d high halves dropped, %0d one-half last words", flushes,
                     dropped_highs, short_lasts));
    $display("RESULT af_axis_downsize FRAMING=%0d words=%0d halves=%0d frames=%0d flushes=%0d dropped_highs=%0d one_half_lasts=%0d",
             FRAMING, words_taken, halves_out, frames, flushes, dropped_highs, short_lasts);
    done = 1'b1;
  end
endmodule

// the top: both framing modes side by side on the link clock (unit_common.svh)
`AF_UNIT_TOP_BOTH_FRAMINGS(tb_unit_axis_downsize, af_axis_downsize_check)
