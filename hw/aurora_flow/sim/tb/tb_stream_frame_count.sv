`timescale 1ps / 1fs
// The word count of a 64 B stream carried in the kernel's own frames (STREAM_FRAME_WORDS = N)
// when control-field errors come closer together than a frame: errors in bursts of 2 or 3,
// 2..N/2 link cycles apart, so most bursts cost one frame two or three 32 B blocks (a whole
// 64 B word, and more), some cost two frames one each, and a lost LAST joins two frames.
// The reference is what the bench sent, word by word (tb_common's pattern), not the kernel:
//  - the user's stream has exactly the sent number of words (README: "the stream keeps its
//    word count"), nothing more arrives later;
//  - received word i is sent word i in every frame (words i of i / N) but the damaged ones,
//    and a damaged frame holds only zero words (padding) and 32 B halves of words sent around
//    it: no foreign data;
//  - exactly one zero 32 B half (padding) delivered per lost block;
//  - at most 2 damaged frames per error (its own; and the one a lost LAST joins it to), so the
//    frame after a damaged one starts on its own first word (a shifted stream would damage
//    every later frame);
//  - SOFT_ERR_COUNT = errors injected, and FRAMES_WITH_ERRORS <= errors injected.
// Plusargs: +seed=N +beats=N (64 B words, rounded up to whole frames) +period=N (link cycles
// between bursts)
module tb_stream_frame_count;
  `include "tb_common.svh"

  localparam int N = STREAM_FRAME_WORDS;
  // channel-word control fields of a data block (aurora_sim_ip): length, LAST, VALID
  localparam int CH_NB = 288, CH_LAST = 293, CH_VALID = 294;

  int unsigned beats = 40000;
  int unsigned period = 1000;
  longint unsigned total;
  logic [63:0] rng;

  initial begin
    if ($value$plusargs("beats=%d", beats)) begin end
    if ($value$plusargs("period=%d", period)) begin end
    total = (longint'(beats) + longint'(N) - 1) / longint'(N) * longint'(N);
    rng = 64'h9E3779B97F4A7C15 ^ 64'(seed) * 64'hBF58476D1CE4E5B9;
    if (USE_FRAMING != 0 || FIFO_WIDTH != 64 || N < 8)
      fail("this bench is for a 64 B stream in the kernel's frames of at least 8 words");
  end

  initial begin
    reset_and_wait_link();
    rx_tready = 1'b1;
    @(negedge ap_clk);
    send_full_rate(total);
  end

  // ---------------- scoreboard ----------------
  bit damaged[longint];
  int unsigned exact = 0, pad_halves = 0;

  // whether `v` is the 32 B half of a word sent within two frames of word i
  function automatic bit sent_half(input logic [255:0] v, input longint i);
    for (longint k = i - 2 * N; k <= i + 2 * N; k++) begin
      logic [DW-1:0] d;
      if (k < 0 || k >= longint'(total)) continue;
      d = pattern(longint'(k));
      if (d[255:0] == v || d[511:256] == v) return 1'b1;
    end
    return 1'b0;
  endfunction

  always @(posedge ap_clk) begin
    if (rx_tvalid && rx_tready) begin
      longint i = longint'(received);
      if (i >= longint'(total))
        fail($sformatf("word %0d received, but only %0d were sent", i, total));
      if (rx_tlast !== 1'b0 || rx_tkeep !== '1) fail("a stream word with TLAST or a partial TKEEP");
      if (rx_tdata == pattern(i)) exact++;
      else begin
        damaged[i / longint'(N)] = 1'b1;
        for (int h = 0; h < 2; h++) begin
          if (rx_tdata[256*h+:256] == '0) pad_halves++;
          else if (!sent_half(rx_tdata[256*h+:256], i))
            fail($sformatf("word %0d (frame %0d) half %0d is neither padding nor data sent around it",
                           i, i / longint'(N), h));
        end
      end
      received++;
    end
  end

  // ---------------- control-field errors, in bursts closer than a frame ----------------
  int unsigned bursts = 0, aimed = 0;
  initial begin
    int unsigned n;
    logic [31:0] hits;
    wait (sent > 0);
    forever begin
      rng = xorshift(rng);
      repeat (period - period / 10 + int'(rng[31:0] % (period / 5))) @(negedge user_clk);
      // the tail stays clean: every frame ends, so every padding is delivered
      if (sent + 1024 >= total) break;
      rng = xorshift(rng);
      n = (rng[40:38] == 3'd0) ? 3 : 2;
      for (int e = 0; e < int'(n); e++) begin
        rng = xorshift(rng);
        case (rng[2:0])
          3'd0, 3'd1, 3'd2, 3'd3, 3'd4: error_bit = 9'(CH_VALID);
          3'd5: error_bit = 9'(CH_LAST);
          default: error_bit = 9'(CH_NB + int'(rng[10:8]) % 5);
        endcase
        hits = errors_injected;
        channel_error(error_bit);
        // the channel flips the bit in the next block that has the field (LAST and the length:
        // a frame's last block); the gap to the next error starts there
        wait (errors_injected != hits);
        aimed++;
        if (e + 1 < int'(n)) repeat (1 + int'(rng[31:16]) % (N / 2 - 1)) @(negedge user_clk);
      end
      bursts++;
    end
  end

  initial begin
    logic [31:0] frame_errors;
    wait (sent >= total);
    repeat (4000) @(posedge ap_clk);
    settle();
    axil_read(af_kernel_pkg::REG_FRAMES_WITH_ERRORS, frame_errors);
    $display("RESULT seed=%0d frame_words=%0d words_sent=%0d words_received=%0d bursts=%0d errors=%0d damaged_frames=%0d exact_words=%0d zero_halves=%0d FRAMES_WITH_ERRORS=%0d",
             seed, N, total, received, bursts, errors_injected, damaged.num(), exact, pad_halves,
             frame_errors);
    if (received != total)
      fail($sformatf("%0d words received for %0d sent: the stream lost its word count", received,
                     total));
    if (errors_injected != aimed || aimed < 2 * bursts || bursts < 10)
      fail($sformatf("%0d errors hit the stream, %0d aimed in %0d bursts: the bench did not exercise close errors",
                     errors_injected, aimed, bursts));
    if (damaged.num() > 2 * errors_injected)
      fail($sformatf("%0d damaged frames for %0d errors: the frames after an error are shifted",
                     damaged.num(), errors_injected));
    // every lost 32 B block is replaced by one zero half (the word count: 2 x words = halves
    // sent - halves lost + halves padded)
    if (pad_halves != errors_injected)
      fail($sformatf("%0d zero halves delivered for %0d lost 32 B blocks", pad_halves,
                     errors_injected));
    expect_reg(af_kernel_pkg::REG_SOFT_ERR_COUNT, errors_injected, "SOFT_ERR_COUNT");
    if (frame_errors == 0 || frame_errors > errors_injected)
      fail($sformatf("FRAMES_WITH_ERRORS=%0d for %0d errors", frame_errors, errors_injected));
    $finish;
  end

  initial watchdog(100000);
endmodule
