// Shared by the unit testbenches of sim/tb/unit/, included inside each checking module (one
// module per configuration of the unit under test): the seed, failure reporting with the
// module's path, seed and time, and the random generator. Every process that draws random
// numbers keeps its own generator state, so the order in which the simulator runs processes
// of one time step cannot change the stimulus.
// Plusargs: +seed=N

int unsigned seed = 1;

task automatic fail(input string msg);
  $display("FAIL seed=%0d time=%0t %m: %s", seed, $time, msg);
  $fatal(1, "testbench failed (replay with +seed=%0d)", seed);
endtask

// one xorshift64 step (Marsaglia, "Xorshift RNGs", 2003)
function automatic logic [63:0] xorshift(input logic [63:0] x);
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return x;
endfunction

// the starting state of generator `salt` (reads +seed itself: it runs at time 0, in no
// particular order with the other initial blocks)
function automatic logic [63:0] rng_start(input int unsigned salt);
  logic [63:0] x;
  if ($value$plusargs("seed=%d", seed)) begin end
  x = 64'h9E3779B97F4A7C15 ^ (64'(seed) * 64'hBF58476D1CE4E5B9) ^ (64'(salt) * 64'h94D049BB133111EB);
  return (x == 0) ? 64'h1 : x;
endfunction

// a number in 0..n-1 from a generator state (the high bits: xorshift's low bits are weakest)
function automatic int unsigned below(input logic [63:0] x, input int unsigned n);
  return x[63:32] % n;
endfunction

`ifndef AF_UNIT_TIMEOUT
// In a testbench's top: fails the test once US microseconds of simulated time have passed
// (1 us steps: a delay must fit 32 bits of the time precision).
`define AF_UNIT_TIMEOUT(US) \
  initial begin \
    repeat (US) #(1us); \
    $display("FAIL timeout after %0d us", US); \
    $fatal(1, "testbench failed"); \
  end
`endif

`ifndef AF_UNIT_RESET_MID_STREAM
// In a checking module with `clk` and `rst_n`: releases reset after three cycles, then resets
// the unit once in mid-stream, when PROGRESS passes a random point (generator SALT) of the
// middle third of TOTAL: three cycles of reset, IN_RESET run at their start, then released.
`define AF_UNIT_RESET_MID_STREAM(PROGRESS, TOTAL, SALT, IN_RESET) \
  begin \
    logic [63:0] mid_rng; \
    repeat (3) @(negedge clk); \
    rst_n = 1'b1; \
    mid_rng = rng_start(SALT); \
    wait (PROGRESS >= TOTAL / 3 + below(mid_rng, TOTAL / 3)); \
    @(negedge clk); \
    rst_n = 1'b0; \
    IN_RESET \
    repeat (3) @(negedge clk); \
    rst_n = 1'b1; \
  end
`endif

`ifndef AF_UNIT_TOP_BOTH_FRAMINGS
// The top of a converter's testbench: its checking module CHECK once per framing mode on the
// link clock, finished when both are done, failed after 2000 us.
`define AF_UNIT_TOP_BOTH_FRAMINGS(TOP, CHECK) \
module TOP; \
  logic clk = 1'b0; \
  logic done0, done1; \
  initial forever #(1241ps) clk = !clk; \
  CHECK #(.FRAMING(1'b0)) u_streaming (.clk(clk), .done(done0)); \
  CHECK #(.FRAMING(1'b1)) u_framing (.clk(clk), .done(done1)); \
  initial begin \
    wait (done0 && done1); \
    $finish; \
  end \
  `AF_UNIT_TIMEOUT(2000) \
endmodule
`endif
