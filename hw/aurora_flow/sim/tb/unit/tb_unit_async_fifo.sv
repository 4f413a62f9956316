`timescale 1ps / 1fs
// af_async_fifo (the dual-clock FIFO between the link and the kernel clock) on its own, at
// DEPTH 4 (the smallest legal) and 16, both on the same two clocks of unrelated periods
// (+wr_ps / +rd_ps), with random valid and ready on both sides. The reference is a queue
// model: every word the FIFO accepted and has not yet handed out, oldest first. Checked:
//  - every word comes out once, in order, unchanged; none is made up, none is lost
//    (the model is empty after the final drain, written = read);
//  - a word offered or handed out stays put until it is taken (valid held, data stable);
//  - no write while all DEPTH memory words are held (overflow) and, at every write edge,
//    wr_level >= the words held in memory (the writer never believes in room that is not
//    there); at every read edge rd_level <= the words written and not yet read (the reader
//    never sees a word that was not written) and <= DEPTH + 1;
//  - with both sides idle long enough for the pointers to cross: rd_level = words held,
//    wr_level = words held minus the one in the output stage, m_valid = (words held > 0)
//    (first-word fall-through), s_ready = (words held < DEPTH + 1); with the reader stopped
//    the FIFO takes exactly DEPTH + 1 words (memory plus the registered read stage, as its
//    header says);
//  - reset, asserted on both sides at once at a random moment with words in flight and
//    released on each side's own clock in random order: m_valid, s_ready and both levels 0
//    while in reset, then an empty FIFO that works (the first word out is the first written
//    after the reset).
// Plusargs: +seed=N +words=N (per depth) +wr_ps=N +rd_ps=N (clock periods, ps)

module af_async_fifo_check #(
    parameter int DEPTH = 16,
    parameter int WIDTH = 32
) (
    input  logic wr_clk,
    input  logic rd_clk,
    input  int   wr_ps,
    input  int   rd_ps,
    output logic done
);
  `include "unit_common.svh"
  localparam int AW = $clog2(DEPTH);

  logic wr_rst_n = 1'b0, rd_rst_n = 1'b0;
  logic [WIDTH-1:0] s_data = '0, m_data;
  logic s_valid = 1'b0, s_ready, m_valid, m_ready = 1'b0;
  logic [AW:0] wr_level, rd_level;

  af_async_fifo #(
      .WIDTH(WIDTH),
      .DEPTH(DEPTH)
  ) dut (
      .wr_clk  (wr_clk),
      .wr_rst_n(wr_rst_n),
      .s_data  (s_data),
      .s_valid (s_valid),
      .s_ready (s_ready),
      .wr_level(wr_level),
      .rd_clk  (rd_clk),
      .rd_rst_n(rd_rst_n),
      .m_data  (m_data),
      .m_valid (m_valid),
      .m_ready (m_ready),
      .rd_level(rd_level)
  );

  // the model: the words the FIFO holds, oldest first
  logic [WIDTH-1:0] model[$];
  longint unsigned written = 0, read = 0, discarded = 0;
  int unsigned words = 20000;
  int unsigned p_write = 0, p_read = 0;  // percent of cycles the writer offers / reader takes
  int unsigned resets = 0, fills = 0, max_rd_level = 0;
  logic [63:0] wr_rng, rd_rng, data_rng, ctl_rng;

  initial begin
    done = 1'b0;
    if ($value$plusargs("words=%d", words)) begin end
    wr_rng = rng_start(DEPTH * 4 + 1);
    rd_rng = rng_start(DEPTH * 4 + 2);
    data_rng = rng_start(DEPTH * 4 + 3);
    ctl_rng = rng_start(DEPTH * 4 + 4);
  end

  // words in the memory (not in the output stage): what the writer must not overwrite. When
  // a read edge falls on this write edge the reader may already have popped the model while
  // m_valid still shows the pre-edge value; the count is then one low, which only weakens
  // the checks below (never a false failure).
  function automatic int in_memory();
    int n = model.size() - (m_valid ? 1 : 0);
    return n < 0 ? 0 : n;
  endfunction

  // write side: checks on the values before this edge, then drives the next cycle
  always @(posedge wr_clk) begin
    if (wr_rst_n) begin
      if (int'(wr_level) > DEPTH)
        fail($sformatf("wr_level %0d above DEPTH %0d", wr_level, DEPTH));
      if (int'(wr_level) < in_memory())
        fail($sformatf("wr_level %0d below the %0d words held in memory: the writer would overwrite",
                       wr_level, in_memory()));
      if (s_valid && s_ready) begin
        if (in_memory() >= DEPTH)
          fail($sformatf("a word accepted with all %0d memory words held (overflow)", DEPTH));
        model.push_back(s_data);
        written++;
      end
    end else if (s_ready) fail("s_ready while the write side is in reset");
    // a word offered stays offered (same data) until it is accepted
    if (!s_valid || s_ready) begin
      wr_rng = xorshift(wr_rng);
      if (below(wr_rng, 100) < p_write) begin
        data_rng = xorshift(data_rng);
        s_data  <= WIDTH'(data_rng);
        s_valid <= 1'b1;
      end else s_valid <= 1'b0;
    end
  end

  // read side
  logic waiting = 1'b0;  // at the last edge a word was shown and not taken
  logic [WIDTH-1:0] waiting_data;
  logic [WIDTH-1:0] want;
  always @(posedge rd_clk) begin
    if (!rd_rst_n) begin
      waiting = 1'b0;
      if (m_valid) fail("m_valid while the read side is in reset");
    end else begin
      if (waiting && !m_valid) fail("m_valid dropped before its word was taken");
      if (waiting && m_data !== waiting_data)
        fail($sformatf("m_data changed from %h to %h while waiting for m_ready", waiting_data, m_data));
      if (int'(rd_level) > model.size())
        fail($sformatf("rd_level %0d above the %0d words written and not yet read", rd_level,
                       model.size()));
      if (int'(rd_level) > DEPTH + 1)
        fail($sformatf("rd_level %0d above DEPTH + 1 = %0d", rd_level, DEPTH + 1));
      if (int'(rd_level) > max_rd_level) max_rd_level = rd_level;
      if (m_valid && m_ready) begin
        if (model.size() == 0) fail($sformatf("word %h handed out that was never written (or twice)", m_data));
        want = model.pop_front();
        if (m_data !== want)
          fail($sformatf("word %0d out: %h, expected %h (lost, reordered or corrupted)", read, m_data, want));
        read++;
      end
      waiting = m_valid && !m_ready;
      waiting_data = m_data;
    end
    rd_rng = xorshift(rd_rng);
    m_ready <= below(rd_rng, 100) < p_read;
  end

  // waits until both sides have seen each other's pointers (two-flop synchronizers, registered
  // Gray pointers, and a word accepted meanwhile loaded and seen back): 16 cycles of each clock
  task automatic settle();
    repeat (16) @(negedge wr_clk);
    repeat (16) @(negedge rd_clk);
  endtask

  task automatic check_idle(input string where);
    int n = model.size();
    if (int'(rd_level) != n) fail($sformatf("%s: rd_level %0d, %0d words held", where, rd_level, n));
    if (int'(wr_level) != (n > 0 ? n - 1 : 0))
      fail($sformatf("%s: wr_level %0d, %0d words held (expected all but the output stage's)",
                     where, wr_level, n));
    if (m_valid !== (n > 0))
      fail($sformatf("%s: m_valid %0d with %0d words held (first-word fall-through)", where, m_valid, n));
    if (s_ready !== (n < DEPTH + 1))
      fail($sformatf("%s: s_ready %0d with %0d of DEPTH + 1 = %0d words held", where, s_ready, n,
                     DEPTH + 1));
  endtask

  // reader stopped, writer offering every cycle: exactly DEPTH + 1 words go in
  task automatic fill_check();
    p_read = 0;
    p_write = 100;
    repeat (4 * (DEPTH + 2)) @(negedge wr_clk);
    settle();
    if (model.size() != DEPTH + 1)
      fail($sformatf("with the reader stopped the FIFO took %0d words, expected DEPTH + 1 = %0d",
                     model.size(), DEPTH + 1));
    check_idle("full");
    fills++;
  endtask

  // writer stopped (its last offered word goes in), reader taking every cycle: empties
  task automatic drain_check();
    p_write = 0;
    p_read = 100;
    while (s_valid) @(negedge wr_clk);
    while (model.size() != 0) @(negedge rd_clk);
    p_read = 0;
    settle();
    check_idle("drained");
  endtask

  // both sides stop where they are (an offered word goes in unless the FIFO is full)
  task automatic pause_check();
    p_write = 0;
    p_read = 0;
    settle();
    check_idle("paused");
  endtask

  task automatic check_in_reset(input string where);
    if (m_valid || s_ready || wr_level != 0 || rd_level != 0)
      fail($sformatf("%s: m_valid %0d s_ready %0d wr_level %0d rd_level %0d (all 0 expected)",
                     where, m_valid, s_ready, wr_level, rd_level));
  endtask

  // asynchronous assertion on both sides at once, between clock edges, whatever is in flight;
  // synchronous release on each side's own clock, in random order
  task automatic reset_check();
    ctl_rng = xorshift(ctl_rng);
    @(negedge wr_clk);
    // edges fall on multiples of 0.5 ps: a quarter ps off them
    #(real'(below(ctl_rng, wr_ps / 2)) * 1ps + 0.25ps);
    wr_rst_n = 1'b0;
    rd_rst_n = 1'b0;
    discarded += model.size();
    model.delete();
    #(1ps);
    check_in_reset("just after reset");
    repeat (3) @(negedge wr_clk);
    repeat (3) @(negedge rd_clk);
    check_in_reset("in reset");
    ctl_rng = xorshift(ctl_rng);
    if (ctl_rng[0]) begin
      @(negedge wr_clk);
      wr_rst_n = 1'b1;
      repeat (below(ctl_rng, 8)) @(negedge rd_clk);
      rd_rst_n = 1'b1;
    end else begin
      @(negedge rd_clk);
      rd_rst_n = 1'b1;
      repeat (below(ctl_rng, 8)) @(negedge wr_clk);
      wr_rst_n = 1'b1;
    end
    resets++;
  endtask

  int unsigned pct[5] = '{0, 10, 50, 90, 100};
  initial begin
    repeat (5) @(negedge wr_clk);
    repeat (5) @(negedge rd_clk);
    check_in_reset("initial reset");
    @(negedge wr_clk);
    wr_rst_n = 1'b1;
    @(negedge rd_clk);
    rd_rst_n = 1'b1;
    settle();
    check_idle("after reset");
    fill_check();
    drain_check();
    while (written < words) begin
      ctl_rng = xorshift(ctl_rng);
      p_write = pct[below(ctl_rng, 5)];
      ctl_rng = xorshift(ctl_rng);
      p_read = pct[below(ctl_rng, 5)];
      ctl_rng = xorshift(ctl_rng);
      repeat (20 + below(ctl_rng, 300)) @(negedge wr_clk);
      ctl_rng = xorshift(ctl_rng);
      case (below(ctl_rng, 32))
        0, 1, 2: pause_check();
        3: fill_check();
        4: drain_check();
        5: if (resets < 4) reset_check();
        default: ;
      endcase
      // at least one reset in mid-traffic
      if (resets == 0 && written >= words / 2) reset_check();
    end
    drain_check();
    if (read + discarded != written)
      fail($sformatf("%0d words written, %0d read, %0d discarded by resets", written, read, discarded));
    $display("RESULT af_async_fifo DEPTH=%0d wr_ps=%0d rd_ps=%0d written=%0d read=%0d discarded=%0d resets=%0d fills=%0d max_rd_level=%0d",
             DEPTH, wr_ps, rd_ps, written, read, discarded, resets, fills, max_rd_level);
    done = 1'b1;
  end
endmodule

module tb_unit_async_fifo;
  int wr_ps = 3103, rd_ps = 3333;
  int unsigned timeout_us = 20000;
  logic wr_clk = 1'b0, rd_clk = 1'b0;
  realtime wr_half, rd_half;
  logic done4, done16;

  initial begin
    if ($value$plusargs("wr_ps=%d", wr_ps)) begin end
    if ($value$plusargs("rd_ps=%d", rd_ps)) begin end
    wr_half = real'(wr_ps) * 0.5ps;
    rd_half = real'(rd_ps) * 0.5ps;
    $display("af_async_fifo: write clock %0d ps, read clock %0d ps", wr_ps, rd_ps);
  end
  // the clocks start after the periods are read; the read clock 0.37 of its period later
  initial begin
    #(100ps);
    forever #(wr_half) wr_clk = !wr_clk;
  end
  initial begin
    #(100ps + real'(rd_ps) * 0.37ps);
    forever #(rd_half) rd_clk = !rd_clk;
  end

  af_async_fifo_check #(.DEPTH(4)) u_depth4 (
      .wr_clk(wr_clk),
      .rd_clk(rd_clk),
      .wr_ps (wr_ps),
      .rd_ps (rd_ps),
      .done  (done4)
  );
  af_async_fifo_check #(.DEPTH(16)) u_depth16 (
      .wr_clk(wr_clk),
      .rd_clk(rd_clk),
      .wr_ps (wr_ps),
      .rd_ps (rd_ps),
      .done  (done16)
  );

  initial begin
    wait (done4 && done16);
    $finish;
  end
  initial begin
    repeat (timeout_us) #(1us);
    $display("FAIL timeout after %0d us: written %0d/%0d, read %0d/%0d", timeout_us,
             u_depth4.written, u_depth16.written, u_depth4.read, u_depth16.read);
    $fatal(1, "testbench failed");
  end
endmodule
