`timescale 1ps / 1fs
// af_axis_upsize (32 B -> 64 B on the link clock, no ready) on its own, FRAMING 0 and 1 side
// by side, with random data at a random beat density, random frame lengths and last-beat
// byte counts, flushes (channel down) at random points and a reset in mid-stream. The
// reference pairs the beats the testbench sends as the module's header comment says:
//  - FRAMING = 0: every two beats since the last flush or reset make one word, the first in
//    the low half; s_last and s_nbytes_m1 are ignored; m_last = 0, m_nbytes_m1 = 63;
//  - FRAMING = 1: the same within a frame, a frame's last beat ends its word: as the upper
//    half (m_nbytes_m1 = 32 + s_nbytes_m1) or, when it falls on a word boundary, alone in
//    the low half with the upper half zero (m_nbytes_m1 = s_nbytes_m1), m_last = 1; so
//    every frame starts on a word boundary;
//  - flush drops an unpaired half (the next beat starts a word); reset drops it too;
//  - the output is registered: a word appears in the cycle after the beat that completes
//    it, for exactly one cycle, and no other cycle has m_valid;
//  - `holding` is 1 exactly while an unpaired half waits (from the cycle after its beat until
//    the cycle after the beat that pairs it, a flush or a reset).
// Plusargs: +seed=N +beats=N (per configuration)

module af_axis_upsize_check #(
    parameter bit FRAMING = 1'b0
) (
    input  logic clk,
    output logic done
);
  `include "unit_common.svh"

  logic rst_n = 1'b0, flush = 1'b0, s_valid = 1'b0, s_last = 1'b0;
  logic [255:0] s_data = '0;
  logic [4:0] s_nbytes_m1 = '0;
  logic m_valid, m_last;
  logic [511:0] m_data;
  logic [5:0] m_nbytes_m1;
  logic holding;

  af_axis_upsize #(.FRAMING(FRAMING)) dut (
      .clk        (clk),
      .rst_n      (rst_n),
      .flush      (flush),
      .s_valid    (s_valid),
      .s_data     (s_data),
      .s_last     (s_last),
      .s_nbytes_m1(s_nbytes_m1),
      .m_valid    (m_valid),
      .m_data     (m_data),
      .m_last     (m_last),
      .m_nbytes_m1(m_nbytes_m1),
      .holding    (holding)
  );

  typedef struct packed {
    logic [511:0] data;
    logic last;
    logic [5:0] nbytes_m1;
    logic [63:0] at;  // the cycle whose edge must show it
  } word_t;
  word_t want[$];
  // edges counted by the checker and by the sender, each in its own process
  longint unsigned cyc = 0, gcyc = 0, beats_sent = 0, words_out = 0, frames = 0, flushes = 0;
  longint unsigned short_ends = 0;
  int unsigned beats = 50000;
  logic [63:0] gen_rng, data_rng;

  initial begin
    done = 1'b0;
    if ($value$plusargs("beats=%d", beats)) begin end
    gen_rng = rng_start(FRAMING * 4 + 1);
    data_rng = rng_start(FRAMING * 4 + 2);
  end

  // the checker: at each edge, the word the output register shows
  word_t w;
  always @(posedge clk) begin
    cyc++;
    if (!rst_n) want.delete();
    else begin
      if (m_valid) begin
        if (want.size() == 0 || want[0].at != cyc)
          fail($sformatf("a word out at cycle %0d that no pair of beats completed the cycle before (next due: %0d)",
                         cyc, want.size() != 0 ? want[0].at : 0));
        w = want.pop_front();
        if (m_data !== w.data)
          fail($sformatf("word %0d: data\n  %h\nexpected\n  %h", words_out, m_data, w.data));
        if (m_last !== w.last || m_nbytes_m1 !== w.nbytes_m1)
          fail($sformatf("word %0d: m_last %0d m_nbytes_m1 %0d, expected %0d %0d", words_out, m_last,
                         m_nbytes_m1, w.last, w.nbytes_m1));
        words_out++;
      end
      if (want.size() != 0 && want[0].at <= cyc)
        fail($sformatf("the word completed at cycle %0d did not appear the cycle after", want[0].at - 1));
    end
  end

  // the sender and the reference pairing: frames of 1..9 beats, the density of beats and
  // the length of flushes chosen per stretch
  logic have = 1'b0;  // an unpaired half (since the last flush) is waiting
  logic have_shown = 1'b0;  // `have` one edge ago: what `holding` shows at this edge
  logic [255:0] half;
  int frame_left = 0, density = 100, flush_left = 0;
  function automatic logic [255:0] random_beat();
    logic [255:0] d;
    for (int i = 0; i < 4; i++) begin
      data_rng = xorshift(data_rng);
      d[64*i+:64] = data_rng;
    end
    return d;
  endfunction

  task automatic expect_word(input logic [511:0] data, input logic last, input logic [5:0] nb);
    word_t x;
    x.data = data;
    x.last = last;
    x.nbytes_m1 = nb;
    x.at = gcyc + 2;  // sampled at the next edge, shown after it
    want.push_back(x);
  endtask

  always @(posedge clk) begin
    logic [255:0] d;
    logic last;
    logic [4:0] nb;
    gcyc++;
    if (rst_n && beats_sent < beats && holding !== have_shown)
      fail($sformatf("holding=%0d at cycle %0d, expected %0d", holding, gcyc, have_shown));
    have_shown = (!rst_n || beats_sent >= beats) ? 1'b0 : have;
    gen_rng = xorshift(gen_rng);
    s_valid <= 1'b0;
    flush <= 1'b0;
    if (!rst_n || beats_sent >= beats) have = 1'b0;
    else if (flush_left > 0) begin
      flush <= 1'b1;
      flush_left--;
      have = 1'b0;
      frame_left = 0;  // the channel went down: the frame is cut
    end else if (below(gen_rng, 1000) == 0) begin
      gen_rng = xorshift(gen_rng);
      flush_left = 1 + below(gen_rng, 4);
      flushes++;
    end else begin
      if (below(gen_rng, 200) == 0) begin
        gen_rng = xorshift(gen_rng);
        density = below(gen_rng, 4) == 0 ? 100 : 10 + below(gen_rng, 90);
      end
      gen_rng = xorshift(gen_rng);
      if (below(gen_rng, 100) < density) begin
        if (frame_left == 0) begin
          gen_rng = xorshift(gen_rng);
          frame_left = 1 + below(gen_rng, 9);
          frames++;
        end
        d = random_beat();
        gen_rng = xorshift(gen_rng);
        nb = gen_rng[4:0];
        // in streaming, s_last is random (ignored); in framing, the frame's last beat
        last = FRAMING ? frame_left == 1 : gen_rng[8];
        frame_left--;
        s_valid <= 1'b1;
        s_data <= d;
        s_last <= last;
        s_nbytes_m1 <= nb;
        beats_sent++;
        if (have) begin
          expect_word({d, half}, FRAMING && last, (FRAMING && last) ? {1'b1, nb} : 6'd63);
          have = 1'b0;
        end else if (FRAMING && last) begin
          expect_word({256'b0, d}, 1'b1, {1'b0, nb});
          short_ends++;
        end else begin
          half = d;
          have = 1'b1;
        end
      end
    end
  end

  initial begin
    // a reset in mid-stream: no word out while it is held
    `AF_UNIT_RESET_MID_STREAM(beats_sent, beats, FRAMING * 4 + 3, #(1ps); if (m_valid) fail("m_valid in reset");)
    wait (beats_sent >= beats);
    repeat (4) @(negedge clk);
    if (want.size() != 0) fail($sformatf("%0d words never came out", want.size()));
    if (flushes == 0 || (FRAMING && short_ends == 0))
      fail($sformatf("coverage: %0d flushes, %0d frames ending on a word boundary", flushes, short_ends));
    $display("RESULT af_axis_upsize FRAMING=%0d beats=%0d words=%0d frames=%0d flushes=%0d short_ends=%0d",
             FRAMING, beats_sent, words_out, frames, flushes, short_ends);
    done = 1'b1;
  end
endmodule

// the top: both framing modes side by side on the link clock (unit_common.svh)
`AF_UNIT_TOP_BOTH_FRAMINGS(tb_unit_axis_upsize, af_axis_upsize_check)
