`timescale 1ps / 1fs
// Control-field errors in framing mode, or on a stream the kernel carries in frames of its own
// (STREAM_FRAME_WORDS): a bit of a data block's control fields (VALID, LAST,
// the last-beat length) flipped every ~50,000 link cycles, so the core drops that 32 B block
// and raises soft_err. The scoreboard identifies every received 32 B half by its content
// (tb_common's pattern: word k's halves are unique) and checks, against what was sent:
//  - nothing but the hit blocks is lost, nothing duplicated or reordered;
//  - a 64 B word is misassembled (halves of different words or positions, or a wrong TLAST)
//    only inside the one received frame the error fell in; the next frame is intact. Bound:
//    after one error at most the rest of the frame it hit, plus the next frame when it hit
//    the frame's last block: <= 2 x MAX_WORDS words with this bench's frames of 1..MAX_WORDS;
//  - every received frame the scoreboard finds damaged is counted in FRAMES_WITH_ERRORS
//    (its CRC fails), and no other; FRAMES_RECEIVED = frames received;
//  - SOFT_ERR_COUNT and RX_REALIGN_COUNT = errors injected.
// On a stream (USE_FRAMING=0) the frames are the kernel's, STREAM_FRAME_WORDS full words each,
// and invisible to the bench: misassembled words after one error are bounded by
// 2 x STREAM_FRAME_WORDS; the frame an error hit ends on a lone half the kernel pads to a word
// (upper half zero: the stream keeps its word count); FRAMES_RECEIVED / FRAMES_WITH_ERRORS
// count the kernel's frames.
// Plusargs: +seed=N +beats=N (64 B or 32 B words sent) +period=N (link cycles between errors)
`define AF_TB_FRAMING
module tb_ctrl_errors;
  `include "tb_common.svh"

  localparam bit USER_FRAMES = USE_FRAMING != 0;
  // the longest frame: the bench's own (framing) or the kernel's (a stream)
  localparam int MAX_WORDS = USER_FRAMES ? 64 : STREAM_FRAME_WORDS;
  localparam int HALVES = FIFO_WIDTH / 32;  // 32 B halves per word
  localparam int BOUND = 2 * MAX_WORDS;
  // channel-word control fields of a data block (aurora_sim_ip): length, LAST, VALID
  localparam int CH_NB = 288, CH_LAST = 293, CH_VALID = 294;

  int unsigned beats = 200000;
  int unsigned period = 50000;
  logic [63:0] rng;

  initial begin
    if ($value$plusargs("beats=%d", beats)) begin end
    if ($value$plusargs("period=%d", period)) begin end
    rng = 64'h9E3779B97F4A7C15 ^ 64'(seed) * 64'hBF58476D1CE4E5B9;
    tx_rng = 64'hD1B54A32D192ED03 ^ 64'(seed) * 64'h94D049BB133111EB;
  end

  // ---------------- sender ----------------
  // tb_common's framed sender: the bench's frames of 1..MAX_WORDS words (framing), or a stream
  // the kernel carries in frames of STREAM_FRAME_WORDS; what it sent, per word, in sent_last
  // and sent_nbytes (half index 2k (+1) names word k's halves)
  initial begin
    reset_and_wait_link();
    rx_tready = 1'b1;
    send_framed(beats, MAX_WORDS, USER_FRAMES);
  end

  // the half a word's 32 B half holds, from its content: pattern(k) puts k in word 0 of the
  // low half; a high half (words 8..15) is found by trying the words around the expected one
  function automatic logic [255:0] half_of(input longint unsigned k, input int h);
    logic [DW-1:0] d;
    d = pattern(k);
    return d[256*h+:256];
  endfunction

  // 2k + h of the half `v`, searched from `near` (a half index) within a window
  // (a half before `near` would be a duplicate or out of order: not searched, so it fails)
  function automatic longint find_half(input logic [255:0] v, input longint near,
                                       input int nbytes);
    logic [255:0] mask;
    for (int b = 0; b < 32; b++) mask[8*b+:8] = (b < nbytes) ? 8'hff : 8'h00;
    for (longint i = near; i < near + 4 * BOUND; i++) begin
      longint k = i / HALVES;
      int h = int'(i % HALVES);
      if (k < longint'(sent) && ((half_of(longint'(k), h) ^ v) & mask) == '0) return i;
    end
    return -1;
  endfunction

  // ---------------- scoreboard ----------------
  longint next_half = 0;  // the half expected next
  int unsigned frames_rx = 0, frames_bad = 0, misassembled = 0, lost_halves = 0;
  int unsigned since_error = 0, worst_after_error = 0, bad_frames_since_error = 0;
  logic frame_bad = 1'b0;

  // the sent halves of word k (a last word of <= 32 B at 64 B is one half)
  function automatic int halves_of(input longint k);
    if (k >= longint'(sent_last.size())) return HALVES;
    if (HALVES == 2 && sent_last[k] && sent_nbytes[k] <= 32) return 1;
    return HALVES;
  endfunction

  always @(posedge ap_clk) begin
    if (rx_tvalid && rx_tready) begin
      int n, word_halves;
      longint id[2];
      logic good;
      n = rx_tlast ? int'($countones(rx_tkeep)) : FIFO_WIDTH;
      word_halves = (HALVES == 2 && n <= 32) ? 1 : HALVES;
      good = 1'b1;
      for (int h = 0; h < word_halves; h++) begin
        int hb = (h == word_halves - 1 && rx_tlast) ? n - 32 * h : 32;
        // on a stream, a kernel frame that lost a block ends on a lone half: the kernel pads
        // it to a word (upper half zero), so the stream keeps its word count
        if (!USER_FRAMES && h == 1 && id[0] % (2 * MAX_WORDS) == 2 * MAX_WORDS - 1 &&
            rx_tdata[511:256] == '0) begin
          word_halves = 1;
          break;
        end
        id[h] = find_half(rx_tdata[256*h+:256], next_half, hb);
        if (id[h] < 0)
          fail($sformatf("received 32 B half %0d of word %0d is no sent half at or after %0d (lost, duplicated or reordered data)",
                         h, received, next_half));
        if (id[h] > next_half) begin
          // skip the halves a sent word does not have (a short last word's upper half)
          longint g = next_half;
          while (g < id[h]) begin
            if (!(g % HALVES == 1 && halves_of(g / HALVES) == 1)) begin
              lost_halves++;
              frame_bad = 1'b1;
            end
            g++;
          end
        end
        next_half = id[h] + 1;
        if (next_half % HALVES == 1 && halves_of(next_half / HALVES) == 1) next_half++;
      end
      // assembled right: the halves of one word, in place, with that word's TLAST and length
      if (id[0] % HALVES != 0) good = 1'b0;
      else begin
        longint k = id[0] / HALVES;
        if (word_halves != halves_of(k)) good = 1'b0;
        if (word_halves == 2 && id[1] != id[0] + 1) good = 1'b0;
        if (rx_tlast !== sent_last[k] || (rx_tlast && n != sent_nbytes[k])) good = 1'b0;
      end
      if (!good) begin
        misassembled++;
        since_error++;
        frame_bad = 1'b1;
      end
      if (rx_tlast) begin
        frames_rx++;
        if (frame_bad) begin
          frames_bad++;
          bad_frames_since_error++;
          if (bad_frames_since_error > 1)
            fail($sformatf("a second damaged frame after one control-field error (frame %0d)", frames_rx));
        end
        frame_bad = 1'b0;
      end
      if (since_error > BOUND)
        fail($sformatf("%0d misassembled words after one error: the bound is %0d", since_error, BOUND));
      received++;
    end
  end

  // ---------------- control-field errors ----------------
  int unsigned injected = 0;
  initial begin
    wait (sent > 0);
    forever begin
      rng = xorshift(rng);
      repeat (period - period / 10 + int'(rng[31:0] % (period / 5))) @(negedge user_clk);
      if (sent >= beats) break;
      rng = xorshift(rng);
      case (rng[2:0])
        3'd0, 3'd1, 3'd2, 3'd3: error_bit = 9'(CH_VALID);
        3'd4, 3'd5: error_bit = 9'(CH_LAST);
        default: error_bit = 9'(CH_NB + int'(rng[10:8]) % 5);
      endcase
      // the scoreboard's window restarts with each error (the bench's errors are far apart)
      worst_after_error = since_error > worst_after_error ? since_error : worst_after_error;
      since_error = 0;
      bad_frames_since_error = 0;
      channel_error(error_bit);
      injected++;
    end
  end

  initial begin
    logic [31:0] realign;
    wait (sent >= beats && left_in_frame == 0);
    repeat (2000) @(posedge ap_clk);
    settle();
    worst_after_error = since_error > worst_after_error ? since_error : worst_after_error;
    axil_read(af_kernel_pkg::REG_RX_REALIGN_COUNT, realign);
    $display("RESULT seed=%0d width=%0d words=%0d frames=%0d errors=%0d lost_halves=%0d misassembled_words=%0d worst_after_one_error=%0d (bound %0d) damaged_frames=%0d RX_REALIGN_COUNT=%0d",
             seed, FIFO_WIDTH, sent, frames_sent, errors_injected, lost_halves, misassembled,
             worst_after_error, BOUND, frames_bad, realign);
    if (errors_injected < 10) fail($sformatf("only %0d errors hit the stream", errors_injected));
    if (lost_halves != errors_injected)
      fail($sformatf("%0d 32 B halves lost for %0d control-field errors", lost_halves, errors_injected));
    if (USER_FRAMES && frames_bad != errors_injected)
      fail($sformatf("%0d damaged frames for %0d errors", frames_bad, errors_injected));
    // at 32 B there is nothing to pair; at 64 B the errors must have shifted some pairs
    if (HALVES == 1 && misassembled != 0) fail("misassembled words at 32 B");
    if (HALVES == 2 && misassembled == 0) fail("no error misassembled a 64 B word: the test did not exercise the pairing");
    if (USER_FRAMES) begin
      expect_reg(af_kernel_pkg::REG_FRAMES_RECEIVED, frames_rx, "FRAMES_RECEIVED");
      expect_reg(af_kernel_pkg::REG_FRAMES_WITH_ERRORS, frames_bad, "FRAMES_WITH_ERRORS");
    end else begin
      // each error costs one of the kernel's frames its CRC; a lost LAST joins two frames
      logic [31:0] frames_reg;
      axil_read(af_kernel_pkg::REG_FRAMES_RECEIVED, frames_reg);
      if (frames_reg > frames_sent || frames_reg + errors_injected < frames_sent)
        fail($sformatf("FRAMES_RECEIVED=%0d for %0d frames sent and %0d errors", frames_reg,
                       frames_sent, errors_injected));
      expect_reg(af_kernel_pkg::REG_FRAMES_WITH_ERRORS, errors_injected, "FRAMES_WITH_ERRORS");
    end
    expect_reg(af_kernel_pkg::REG_SOFT_ERR_COUNT, errors_injected, "SOFT_ERR_COUNT");
    expect_reg(af_kernel_pkg::REG_RX_REALIGN_COUNT, errors_injected, "RX_REALIGN_COUNT");
    $finish;
  end

  initial watchdog(100000);
endmodule
