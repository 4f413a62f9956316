// Shared testbench harness, included inside each testbench module. It
// provides: the three clocks, one AuroraFlow kernel `dut` looped back through
// a simulated channel (its TX lanes wired to its own RX lanes, like a QSFP
// loopback through the optical switch), AXI4-Lite tasks, the data pattern and
// failure reporting with seed and cycle.
//
// With AF_PEER defined the far end is a second kernel `peer` on its own link
// clock, +ppm=N parts per million faster (negative: slower), that forwards
// everything it receives back (the deployment's `forward` role): data go
// dut -> channel_out -> peer -> channel -> dut, and each direction crosses
// between the two clocks through the core's clock compensation (elastic
// buffer in aurora_sim_channel). `channel` is always the one into the dut.
//
// It also declares the bench's parameters (below), so a bench has no parameter list of its own.
// Plusargs: +seed=N, +ap_mhz=N, +ppm=N (AF_PEER).

// ---------------- parameters ----------------
// The kernel's parameters take kernel.toml's defaults (af_kernel_pkg); each test sets what it
// varies with -G (hw/aurora_flow/BUCK). They are declared here, in the module body: in a
// module without a parameter port list a body `parameter` can be overridden (IEEE 1800-2017
// 6.20.1), so the eight benches share one list. A bench that defines AF_TB_FRAMING before the
// include defaults to framing mode; one that defines AF_TB_OWN_PARAMS declares its own.
`ifndef AF_TB_OWN_PARAMS
`ifdef AF_TB_FRAMING
parameter int USE_FRAMING = 1;
`else
parameter int USE_FRAMING = af_kernel_pkg::DEFAULT_USE_FRAMING;
`endif
parameter int FIFO_WIDTH = af_kernel_pkg::DEFAULT_FIFO_WIDTH;
parameter int RX_FIFO_SIZE = af_kernel_pkg::DEFAULT_RX_FIFO_SIZE;
// the simulated channel's delay in link cycles, each way (not a kernel parameter)
parameter int CH_DELAY = 64;
// kernel.toml's derived default: half the RX FIFO's depth in words
parameter int RX_FIFO_PROG_FULL = RX_FIFO_SIZE / FIFO_WIDTH / 2;
parameter int CABLE_M = af_kernel_pkg::DEFAULT_CABLE_M;
parameter int XON_ON_EMPTY = af_kernel_pkg::DEFAULT_XON_ON_EMPTY;
`endif
// a local parameter in a bench with a parameter list of its own (AF_TB_OWN_PARAMS)
parameter int STREAM_FRAME_WORDS = af_kernel_pkg::DEFAULT_STREAM_FRAME_WORDS;

localparam int DW = FIFO_WIDTH * 8;
localparam int NWORD = DW / 32;
localparam real USER_CLK_MHZ = af_kernel_pkg::USER_CLK_MHZ;

int unsigned seed = 1;
int unsigned ap_mhz = 250;
longint unsigned user_cycles = 0;
logic ap_clk = 1'b0, user_clk = 1'b0, init_clk = 1'b0;
logic ap_rst_n = 1'b0;
realtime ap_half, user_half, peer_half;
int ppm = 0;
logic user_clk_peer = 1'b0;

initial begin
  if ($value$plusargs("seed=%d", seed)) begin end
  if ($value$plusargs("ap_mhz=%d", ap_mhz)) begin end
  if ($value$plusargs("ppm=%d", ppm)) begin end
  ap_half = 500.0ns / real'(ap_mhz);
  user_half = 1000.0ns / USER_CLK_MHZ / 2.0;
  peer_half = user_half / (1.0 + real'(ppm) * 1.0e-6);
end
// the peer's clock starts a fraction of a cycle later: its edges drift across the dut's
initial begin
  #(333ps);
  forever #(peer_half) user_clk_peer = !user_clk_peer;
end
initial forever #(ap_half) ap_clk = !ap_clk;
initial forever #(user_half) user_clk = !user_clk;
initial forever #(5ns) init_clk = !init_clk;
always @(posedge user_clk) user_cycles <= user_cycles + 1;

task automatic fail(input string msg);
  $display("FAIL seed=%0d user_cycle=%0d time=%0t: %s", seed, user_cycles, $time, msg);
  $fatal(1, "testbench failed (replay with +seed=%0d)", seed);
endtask

// ---------------- kernel + channel ----------------
logic [DW-1:0] tx_tdata = '0, rx_tdata;
logic tx_tvalid = 1'b0, tx_tready, tx_tlast = 1'b0;
logic [FIFO_WIDTH-1:0] tx_tkeep = '1, rx_tkeep;
logic rx_tvalid, rx_tready = 1'b0, rx_tlast;
logic [11:0] awaddr = '0, araddr = '0;
logic awvalid = 1'b0, wvalid = 1'b0, bready = 1'b0, arvalid = 1'b0, rready = 1'b0;
logic awready, wready, bvalid, arready, rvalid;
logic [31:0] wdata = '0, rdata;
logic [1:0] bresp, rresp;
logic [301:0] ch_a2a_in, ch_a2a_out;
logic link_ok = 1'b1, inject_error = 1'b0;
logic [8:0] error_bit = 9'd0;
logic [31:0] errors_injected, words_lost;

aurora_flow #(
    .USE_FRAMING    (USE_FRAMING),
    .FIFO_WIDTH     (FIFO_WIDTH),
    .RX_FIFO_SIZE   (RX_FIFO_SIZE),
    .RX_FIFO_PROG_FULL(RX_FIFO_PROG_FULL),
    .CABLE_M        (CABLE_M),
    .XON_ON_EMPTY   (XON_ON_EMPTY),
    .STREAM_FRAME_WORDS(STREAM_FRAME_WORDS),
    .IP_RESET_CYCLES(300)
) dut (
    .ap_clk(ap_clk),
    .ap_rst_n(ap_rst_n),
    .init_clk(init_clk),
    .tx_axis_tdata(tx_tdata),
    .tx_axis_tvalid(tx_tvalid),
    .tx_axis_tready(tx_tready),
    .tx_axis_tlast(tx_tlast),
    .tx_axis_tkeep(tx_tkeep),
    .rx_axis_tdata(rx_tdata),
    .rx_axis_tvalid(rx_tvalid),
    .rx_axis_tready(rx_tready),
    .rx_axis_tlast(rx_tlast),
    .rx_axis_tkeep(rx_tkeep),
    .s_axi_control_awaddr(awaddr),
    .s_axi_control_awvalid(awvalid),
    .s_axi_control_awready(awready),
    .s_axi_control_wdata(wdata),
    .s_axi_control_wstrb(4'hf),
    .s_axi_control_wvalid(wvalid),
    .s_axi_control_wready(wready),
    .s_axi_control_bresp(bresp),
    .s_axi_control_bvalid(bvalid),
    .s_axi_control_bready(bready),
    .s_axi_control_araddr(araddr),
    .s_axi_control_arvalid(arvalid),
    .s_axi_control_arready(arready),
    .s_axi_control_rdata(rdata),
    .s_axi_control_rresp(rresp),
    .s_axi_control_rvalid(rvalid),
    .s_axi_control_rready(rready),
    .gt_refclk(user_clk),
    .ch_tx(ch_a2a_in),
    .ch_rx(ch_a2a_out)
);

`ifndef AF_PEER
aurora_sim_channel #(.DELAY(CH_DELAY)) channel (
    .clk(user_clk),
    .rx_clk(user_clk),
    .link_ok(link_ok),
    .inject_error(inject_error),
    .error_bit(error_bit),
    .ch_in(ch_a2a_in),
    .ch_out(ch_a2a_out),
    .errors_injected(errors_injected),
    .words_lost(words_lost)
);
`else
logic [301:0] ch_peer_tx, ch_peer_rx;
logic [31:0] out_errors_unused, out_words_lost;
aurora_sim_channel #(.DELAY(CH_DELAY), .ASYNC(1)) channel_out (
    .clk(user_clk),
    .rx_clk(user_clk_peer),
    .link_ok(link_ok),
    .inject_error(1'b0),
    .error_bit(9'd0),
    .ch_in(ch_a2a_in),
    .ch_out(ch_peer_rx),
    .errors_injected(out_errors_unused),
    .words_lost(out_words_lost)
);
aurora_sim_channel #(.DELAY(CH_DELAY), .ASYNC(1)) channel (
    .clk(user_clk_peer),
    .rx_clk(user_clk),
    .link_ok(link_ok),
    .inject_error(inject_error),
    .error_bit(error_bit),
    .ch_in(ch_peer_tx),
    .ch_out(ch_a2a_out),
    .errors_injected(errors_injected),
    .words_lost(words_lost)
);

// the far end: receives and sends back whatever arrives (rx_axis -> tx_axis)
logic [DW-1:0] p_tdata;
logic p_tvalid, p_tready, p_tlast;
logic [FIFO_WIDTH-1:0] p_tkeep;
/* verilator lint_off UNUSEDSIGNAL */
logic p_awready, p_wready, p_bvalid, p_arready, p_rvalid;
logic [31:0] p_rdata;
logic [1:0] p_bresp, p_rresp;
/* verilator lint_on UNUSEDSIGNAL */
aurora_flow #(
    .USE_FRAMING    (USE_FRAMING),
    .FIFO_WIDTH     (FIFO_WIDTH),
    .RX_FIFO_SIZE   (RX_FIFO_SIZE),
    .RX_FIFO_PROG_FULL(RX_FIFO_PROG_FULL),
    .CABLE_M        (CABLE_M),
    .XON_ON_EMPTY   (XON_ON_EMPTY),
    .IP_RESET_CYCLES(300)
) peer (
    .ap_clk(ap_clk), .ap_rst_n(ap_rst_n), .init_clk(init_clk),
    .tx_axis_tdata(p_tdata), .tx_axis_tvalid(p_tvalid), .tx_axis_tready(p_tready),
    .tx_axis_tlast(p_tlast), .tx_axis_tkeep(p_tkeep),
    .rx_axis_tdata(p_tdata), .rx_axis_tvalid(p_tvalid), .rx_axis_tready(p_tready),
    .rx_axis_tlast(p_tlast), .rx_axis_tkeep(p_tkeep),
    .s_axi_control_awaddr(12'h0), .s_axi_control_awvalid(1'b0), .s_axi_control_awready(p_awready),
    .s_axi_control_wdata(32'h0), .s_axi_control_wstrb(4'h0), .s_axi_control_wvalid(1'b0),
    .s_axi_control_wready(p_wready), .s_axi_control_bresp(p_bresp), .s_axi_control_bvalid(p_bvalid),
    .s_axi_control_bready(1'b1), .s_axi_control_araddr(12'h0), .s_axi_control_arvalid(1'b0),
    .s_axi_control_arready(p_arready), .s_axi_control_rdata(p_rdata), .s_axi_control_rresp(p_rresp),
    .s_axi_control_rvalid(p_rvalid), .s_axi_control_rready(1'b1),
    .gt_refclk(user_clk_peer), .ch_tx(ch_peer_tx), .ch_rx(ch_peer_rx)
);

always @(posedge user_clk_peer) begin
  if (peer.rx_drop) fail("peer RX FIFO overflow: a word arrived while its FIFO was full");
  if (out_words_lost != 0) fail("the elastic buffer into the peer lost a word (clock compensation too slow)");
end
`endif

always @(posedge user_clk)
  if (words_lost != 0) fail("the elastic buffer into the dut lost a word (clock compensation too slow)");

// ---------------- register map: af_kernel_pkg (kernel.toml) ----------------

// AXI4-Lite master: inputs change after the falling edge (Verilator and
// Icarus agree on that ordering)
task automatic axil_write(input logic [11:0] addr, input logic [31:0] data);
  @(negedge ap_clk);
  awaddr = addr; awvalid = 1'b1; wdata = data; wvalid = 1'b1; bready = 1'b1;
  do @(posedge ap_clk); while (!(awready && wready));
  @(negedge ap_clk);
  awvalid = 1'b0; wvalid = 1'b0;
  while (!bvalid) @(negedge ap_clk);
  if (bresp != 2'b00) fail("AXI4-Lite write response not OKAY");
  @(posedge ap_clk);
  @(negedge ap_clk);
  bready = 1'b0;
endtask

task automatic axil_read(input logic [11:0] addr, output logic [31:0] data);
  @(negedge ap_clk);
  araddr = addr; arvalid = 1'b1; rready = 1'b1;
  do @(posedge ap_clk); while (!arready);
  @(negedge ap_clk);
  arvalid = 1'b0;
  while (!rvalid) @(negedge ap_clk);
  data = rdata;
  if (rresp != 2'b00) fail("AXI4-Lite read response not OKAY");
  @(posedge ap_clk);
  @(negedge ap_clk);
  rready = 1'b0;
endtask

// counters cross from the link clock with a handshake: let a fresh snapshot arrive
task automatic settle();
  repeat (40) @(posedge ap_clk);
endtask

task automatic expect_reg(input logic [11:0] addr, input logic [31:0] want, input string what);
  logic [31:0] got;
  axil_read(addr, got);
  if (got !== want)
    fail($sformatf("register 0x%03h (%s) = %0d (0x%08h), expected %0d (0x%08h)", addr, what, got,
                   got, want, want));
endtask

// ---------------- data pattern ----------------
// word 0 carries the beat index; the other words are a hash of index and seed,
// so a lost, duplicated, reordered or corrupted beat is detected
function automatic logic [DW-1:0] pattern(input longint unsigned k);
  logic [DW-1:0] d;
  d[31:0] = 32'(k);
  for (int j = 1; j < NWORD; j++) d[32*j+:32] = 32'(k) * 32'h9E3779B1 ^ 32'(j) * 32'h85EBCA77 ^ seed;
  return d;
endfunction

// ---------------- traffic harness ----------------
// beats the testbench handed to tx_axis and took from rx_axis
longint unsigned sent = 0, received = 0;

// one xorshift64 step (Marsaglia, "Xorshift RNGs", 2003): random gaps and stalls
function automatic logic [63:0] xorshift(input logic [63:0] x);
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return x;
endfunction

// sends beats sent..n-1 back to back (the sender outruns the link), then idles
task automatic send_full_rate(input longint unsigned n);
  logic fire;
  tx_tdata = pattern(sent);
  tx_tvalid = 1'b1;
  while (sent < n) begin
    @(posedge ap_clk);
    fire = tx_tvalid && tx_tready;
    @(negedge ap_clk);
    if (fire) begin
      sent++;
      if (sent == n) tx_tvalid = 1'b0;
      else tx_tdata = pattern(sent);
    end
  end
endtask

// One ap_clk cycle of tx_axis, from just after a falling edge to the next: `taken` = the word
// on offer was accepted at the rising edge; then it is counted in `sent` and withdrawn (the
// caller offers the next one before the next call).
task automatic tx_cycle(output logic taken);
  @(posedge ap_clk);
  taken = tx_tvalid && tx_tready;
  @(negedge ap_clk);
  if (taken) begin
    sent++;
    tx_tvalid = 1'b0;
  end
endtask

// The framed sender of the framing-mode benches. Words sent..n-1, then to the end of the frame:
// frames of 1 + (a random 6-bit number mod max_words) words whose last word has 1..FIFO_WIDTH
// random valid bytes and TLAST (user_frames), or a plain stream counted in frames of exactly
// max_words words (the kernel's own, STREAM_FRAME_WORDS; no TLAST). Records, per word taken,
// its TLAST and valid bytes (sent_last, sent_nbytes), and counts the frames taken. `tx_rng` is
// its random generator; the bench seeds it.
logic [63:0] tx_rng;
logic sent_last[$];
int sent_nbytes[$];
int unsigned frames_sent = 0, left_in_frame = 0;

task automatic offer_framed_word(input int max_words, input bit user_frames);
  int unsigned nbytes;
  logic [FIFO_WIDTH-1:0] keep;
  if (left_in_frame == 0) begin
    tx_rng = xorshift(tx_rng);
    left_in_frame = user_frames ? 1 + int'(tx_rng[5:0]) % max_words : max_words;
  end
  tx_rng = xorshift(tx_rng);
  tx_tdata = pattern(sent);
  tx_tlast = user_frames && (left_in_frame == 1);
  nbytes = tx_tlast ? 1 + int'(tx_rng[15:8]) % FIFO_WIDTH : FIFO_WIDTH;
  // whole-vector assignment: Verilator 5.006 misses bit-select writes in a loop
  for (int b = 0; b < FIFO_WIDTH; b++) keep[b] = (b < nbytes);
  tx_tkeep = keep;
  tx_tvalid = 1'b1;
endtask

task automatic send_framed(input longint unsigned n, input int max_words, input bit user_frames);
  logic taken;
  @(negedge ap_clk);
  offer_framed_word(max_words, user_frames);
  while (sent < n || left_in_frame != 0) begin
    tx_cycle(taken);
    if (taken) begin
      sent_last.push_back(tx_tlast);
      sent_nbytes.push_back(int'($countones(tx_tkeep)));
      if (left_in_frame == 1) frames_sent++;
      left_in_frame--;
      if (sent < n || left_in_frame != 0) offer_framed_word(max_words, user_frames);
    end
  end
endtask

// Flips channel word bit `b` in the next channel word that carries it (aurora_sim_channel).
task automatic channel_error(input logic [8:0] b);
  error_bit = b;
  inject_error = 1'b1;
  @(negedge user_clk);
  inject_error = 1'b0;
endtask

// the full-rate sender of the loss and in-flight benches: bring-up, then words 0..n-1 back to
// back
task automatic start_full_rate(input longint unsigned n);
  reset_and_wait_link();
  send_full_rate(n);
endtask

// fails the test once `us` microseconds of simulated time have passed (deadlock, lost beats)
task automatic watchdog(input int us);
  repeat (us) #(1us);  // 1 us steps: a delay must fit 32 bits of the 1 fs precision
  fail($sformatf("timeout after %0d us: sent %0d received %0d", us, sent, received));
endtask

task automatic reset_and_wait_link();
  ap_rst_n = 1'b0;
  repeat (20) @(posedge ap_clk);
  @(negedge ap_clk);
  ap_rst_n = 1'b1;
  wait_link_up(200000);
endtask

task automatic wait_link_up(input int max_cycles);
  int n = 0;
  while (dut.status !== 13'h11ff) begin
    @(posedge user_clk);
    n++;
    if (n > max_cycles) fail("link did not come up");
  end
endtask
