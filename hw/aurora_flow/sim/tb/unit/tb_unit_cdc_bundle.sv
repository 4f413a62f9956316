`timescale 1ps / 1fs
// af_cdc_bundle (a status word across clocks with a toggle handshake) on its own. The
// source word changes at random source edges (every cycle, sparsely, or not at all for a
// while); each value is distinct: [31:0] its sequence number, the rest random. The
// reference is the history of the source word (value and the time it was set). At every
// destination edge:
//  - the destination shows a value the source had, whole: its upper bits are the ones
//    recorded for its sequence number (a mix of two values' bits fails this), or, before
//    the first transfer, the reset value 0;
//  - never an older value than it showed before;
//  - never one that the source replaced more than BOUND ago, BOUND = 6 destination periods
//    + 3 source periods: a snapshot that has just left waits for its acknowledgement (3
//    destination edges through the request synchronizer and the capture register, 3 source
//    edges through the acknowledge synchronizer and the next snapshot), then the next
//    snapshot, which holds the final value, takes 3 destination edges more. So after the
//    source's last change its value arrives within BOUND (6 + 3 x Tsrc/Tdst destination
//    cycles), which the quiet stretches check explicitly.
// Plusargs: +seed=N +changes=N +src_ps=N +dst_ps=N (clock periods, ps)

module tb_unit_cdc_bundle;
  `include "unit_common.svh"
  localparam int WIDTH = 100;

  int src_ps = 2482, dst_ps = 3333;  // link clock -> kernel clock, as the kernel uses it
  int unsigned changes = 20000;
  logic src_clk = 1'b0, dst_clk = 1'b0;
  logic src_rst_n = 1'b0, dst_rst_n = 1'b0;
  realtime src_half, dst_half, bound;
  logic [WIDTH-1:0] src_data = '0, dst_data;

  af_cdc_bundle #(.WIDTH(WIDTH)) dut (
      .src_clk  (src_clk),
      .src_rst_n(src_rst_n),
      .src_data (src_data),
      .dst_clk  (dst_clk),
      .dst_rst_n(dst_rst_n),
      .dst_data (dst_data)
  );

  initial begin
    if ($value$plusargs("src_ps=%d", src_ps)) begin end
    if ($value$plusargs("dst_ps=%d", dst_ps)) begin end
    if ($value$plusargs("changes=%d", changes)) begin end
    src_half = real'(src_ps) * 0.5ps;
    dst_half = real'(dst_ps) * 0.5ps;
    bound = 6.0 * real'(dst_ps) * 1ps + 3.0 * real'(src_ps) * 1ps;
  end
  initial begin
    #(100ps);
    forever #(src_half) src_clk = !src_clk;
  end
  initial begin
    #(100ps + real'(dst_ps) * 0.41ps);
    forever #(dst_half) dst_clk = !dst_clk;
  end

  // the history: value k's upper bits and the time it was set
  logic [WIDTH-33:0] hist_hi[$];
  realtime hist_t[$];
  logic [63:0] src_rng, ctl_rng;
  int unsigned p_change = 100;  // percent of source edges that change the word

  function automatic logic [WIDTH-1:0] next_value();
    logic [WIDTH-33:0] hi;
    src_rng = xorshift(src_rng);
    hi[63:0] = src_rng;
    src_rng = xorshift(src_rng);
    hi[WIDTH-33:64] = src_rng[WIDTH-97:0];
    hist_hi.push_back(hi);
    hist_t.push_back($realtime);
    return {hi, 32'(hist_hi.size() - 1)};
  endfunction

  // the first value at the first edge out of reset (until then the word is 0), then changes
  // at p_change percent of the edges
  always @(posedge src_clk) begin
    if (src_rst_n && hist_hi.size() < changes) begin
      src_rng = xorshift(src_rng);
      if (hist_hi.size() == 0 || below(src_rng, 100) < p_change) src_data <= next_value();
    end
  end

  // the checker
  longint shown = -1;  // sequence number shown (-1: the reset value)
  realtime worst = 0;  // the longest a replaced value was still shown
  always @(posedge dst_clk) begin
    longint k;
    realtime stale;
    if (dst_rst_n && hist_hi.size() != 0) begin
      if (dst_data == '0 && shown < 0) k = -1;
      else begin
        k = longint'(dst_data[31:0]);
        if (k >= hist_hi.size())
          fail($sformatf("destination shows %h: sequence %0d, but the source has had %0d values", dst_data, k,
                         hist_hi.size()));
        if (dst_data[WIDTH-1:32] !== hist_hi[k])
          fail($sformatf("destination shows %h: not value %0d (%h...): bits of two values mixed", dst_data, k,
                         {hist_hi[k], 32'(k)}));
        if (k < shown) fail($sformatf("destination went back from value %0d to %0d", shown, k));
      end
      shown = k;
      if (k + 1 < hist_hi.size()) begin
        stale = $realtime - hist_t[k+1];
        if (stale > worst) worst = stale;
        if (stale > bound + 0.001)  // 1 fs: the times are sums of real periods
          fail($sformatf("destination still shows value %0d, replaced at the source %0.1f ps ago (bound %0.1f ps)",
                         k, stale, bound));
      end
    end
  end

  int unsigned pct[5] = '{100, 50, 10, 1, 0};
  int unsigned quiet_checks = 0;

  // the source's last value is shown by BOUND after it was set
  task automatic check_arrived(input string what);
    realtime due;
    due = hist_t[hist_t.size()-1] + bound + 1.0;
    if (due > $realtime) #(due - $realtime);
    if (dst_data !== {hist_hi[hist_hi.size()-1], 32'(hist_hi.size() - 1)})
      fail($sformatf("%s (value %0d) not shown %0.1f ps after it was set", what, hist_hi.size() - 1, bound));
    quiet_checks++;
  endtask

  initial begin
    src_rng = rng_start(1);
    ctl_rng = rng_start(2);
    // the destination leaves reset first
    repeat (3) @(negedge dst_clk);
    dst_rst_n = 1'b1;
    repeat (3) @(negedge src_clk);
    src_rst_n = 1'b1;
    while (hist_hi.size() < changes) begin
      ctl_rng = xorshift(ctl_rng);
      p_change = pct[below(ctl_rng, 5)];
      @(negedge src_clk);
      if (p_change == 0) check_arrived("the last value of a quiet stretch");
      ctl_rng = xorshift(ctl_rng);
      repeat (20 + below(ctl_rng, 200)) @(negedge src_clk);
    end
    @(negedge src_clk);
    check_arrived("the final value");
    $display("RESULT af_cdc_bundle src_ps=%0d dst_ps=%0d values=%0d quiet_checks=%0d worst=%0.1f ps bound=%0.1f ps",
             src_ps, dst_ps, hist_hi.size(), quiet_checks, worst, bound);
    $finish;
  end
  `AF_UNIT_TIMEOUT(5000)
endmodule
