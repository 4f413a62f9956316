`timescale 1ps / 1fs
// Registers over AXI4-Lite against the public AuroraFlow register map and
// the testbench's own counts:
//  1. after bring-up CORE_STATUS = 0x11ff; CONFIGURATION and FIFO_THRESHOLDS
//     decode (with the host header's masks) to the kernel's parameters;
//  2. COUNTER_RESET clears every counter; TX_COUNT/RX_COUNT = beats handled;
//  3. COUNTER_RESET mid-stream: TX_COUNT/RX_COUNT restart from the release;
//  4. per-lane status faults: each of GT_NOT_READY_0..3 and LINE_DOWN_0..3
//     counts only its own lane (0x048..0x054 decode their own lane; lanes
//     1..3 count without lane 0 being down), STATUS_NOT_OK_COUNT (0x024) and
//     the other status counters equal the cycles the testbench counted;
//  5. link drop and restore mid-stream: the link comes back, traffic resumes
//     in order (loss only while down), no deadlock, CHANNEL_DOWN/LINE_DOWN
//     equal the counted cycles;
//  6. CORE_RESET mid-stream: FIFOs and core restart, the link comes back,
//     traffic resumes, counters survive the core reset;
//  7. FIFO_STATUS under load, against the testbench's count of words in the
//     RX FIFO (tx_axis handshakes minus rx_axis handshakes, exact once the
//     link is quiet) and the threshold parameters: receiver stalled, RX
//     FIFO filled to PROG_FULL-1 (RX_PROG_FULL clear) and PROG_FULL (set);
//     the sender keeps pushing until XOFF and a full TX FIFO stop it while
//     RX_PROG_FULL is read set and RX_ALMOST_FULL clear (fewer than DEPTH-1
//     words outstanding); the receiver drains to PROG_EMPTY+1 (both clear)
//     and PROG_EMPTY (RX_PROG_EMPTY set); then, with the core's XOFF pause
//     forced off, the RX FIFO filled to DEPTH-2 (almost-full clear) and
//     DEPTH-1 (RX_ALMOST_FULL set), nothing lost, and drained.
module tb_registers;
  `include "tb_common.svh"

  localparam int RX_DEPTH = RX_FIFO_SIZE / FIFO_WIDTH;
  // the kernel's default XON threshold (FIFO_THRESHOLDS is checked against it)
  localparam int RX_PROG_EMPTY = RX_DEPTH / 8;

  // ---------------- traffic ----------------
  logic send_enable = 1'b0;
  // the sender stops presenting beats once `sent` reaches this
  longint unsigned send_limit = 64'hffff_ffff_ffff_ffff;
  logic loss_allowed = 1'b0;
  longint unsigned next_index = 0, lost = 0;
  longint unsigned tb_tx_count = 0, tb_rx_count = 0;

  initial begin
    logic fire;
    forever begin
      tx_cycle(fire);
      if (!tx_tvalid && send_enable && sent < send_limit) begin
        tx_tdata = pattern(sent);
        tx_tvalid = 1'b1;
      end
    end
  end

  always @(posedge ap_clk) begin
    if (dut.counter_reset) begin
      tb_tx_count <= 0;
      tb_rx_count <= 0;
    end else begin
      if (tx_tvalid && tx_tready) tb_tx_count <= tb_tx_count + 1;
      if (rx_tvalid && rx_tready) tb_rx_count <= tb_rx_count + 1;
    end
    if (rx_tvalid && rx_tready) begin
      longint unsigned idx;
      idx = 64'(rx_tdata[31:0]);
      if (idx < next_index) fail($sformatf("beat %0d after %0d: duplicated or reordered", idx, next_index));
      if (rx_tdata !== pattern(idx)) fail($sformatf("beat %0d corrupted", idx));
      if (idx != next_index && !loss_allowed)
        fail($sformatf("beats %0d..%0d lost while the link was up", next_index, idx - 1));
      lost += idx - next_index;
      next_index = idx + 1;
      received++;
    end
  end

  // ---------------- status cycle counts (sampled like the monitor) ----------------
  logic counting = 1'b0;
  longint unsigned c_not_ok = 0, c_pll = 0, c_mmcm = 0, c_hard = 0, c_soft = 0, c_chan = 0;
  longint unsigned c_gt[4] = '{0, 0, 0, 0}, c_line[4] = '{0, 0, 0, 0};
  always @(negedge user_clk) begin
    if (counting) begin
      if (dut.status != 13'h11ff) c_not_ok++;
      for (int i = 0; i < 4; i++) begin
        if (!dut.status[i]) c_gt[i]++;
        if (!dut.status[4+i]) c_line[i]++;
      end
      if (!dut.status[8]) c_pll++;
      if (dut.status[9]) c_mmcm++;
      if (dut.status[10]) c_hard++;
      if (dut.status[11]) c_soft++;
      if (!dut.status[12]) c_chan++;
    end
  end

  task automatic check_status_counters(input string when);
    expect_reg(af_kernel_pkg::REG_STATUS_NOT_OK_COUNT, 32'(c_not_ok), {when, ": STATUS_NOT_OK_COUNT"});
    for (int i = 0; i < 4; i++) begin
      expect_reg(af_kernel_pkg::REG_GT_NOT_READY_0_COUNT + 12'(4 * i), 32'(c_gt[i]), $sformatf("%s: GT_NOT_READY_%0d", when, i));
      expect_reg(af_kernel_pkg::REG_LINE_DOWN_0_COUNT + 12'(4 * i), 32'(c_line[i]), $sformatf("%s: LINE_DOWN_%0d", when, i));
    end
    expect_reg(af_kernel_pkg::REG_PLL_NOT_LOCKED_COUNT, 32'(c_pll), {when, ": PLL_NOT_LOCKED_COUNT"});
    expect_reg(af_kernel_pkg::REG_MMCM_NOT_LOCKED_COUNT, 32'(c_mmcm), {when, ": MMCM_NOT_LOCKED_COUNT"});
    expect_reg(af_kernel_pkg::REG_HARD_ERR_COUNT, 32'(c_hard), {when, ": HARD_ERR_COUNT"});
    expect_reg(af_kernel_pkg::REG_SOFT_ERR_COUNT, 32'(c_soft), {when, ": SOFT_ERR_COUNT"});
    expect_reg(af_kernel_pkg::REG_CHANNEL_DOWN_COUNT, 32'(c_chan), {when, ": CHANNEL_DOWN_COUNT"});
  endtask

  task automatic counter_reset_pulse();
    axil_write(af_kernel_pkg::REG_COUNTER_RESET, 1);
    axil_write(af_kernel_pkg::REG_COUNTER_RESET, 0);
    // the link-clock counters leave reset a few cycles after the register
    wait (dut.counter_reset_u == 1'b0);
  endtask

  task automatic drain();
    send_enable = 1'b0;
    wait (!tx_tvalid);
    while (next_index != sent) @(posedge ap_clk);
    repeat (50) @(posedge ap_clk);
  endtask

  logic tb_backpressure = 1'b0;
  always @(posedge ap_clk) if (tx_tvalid && !tx_tready && dut.ap_core_rst_n) tb_backpressure <= 1'b1;

  // ---------------- FIFO_STATUS reference (section 7) ----------------
  // RX flags [7:4] for n words in the RX FIFO: ALMOST_FULL (n >= DEPTH-1),
  // PROG_FULL (n >= PROG_FULL), ALMOST_EMPTY (n <= 1), PROG_EMPTY (n <= PROG_EMPTY)
  function automatic logic [3:0] rx_flags(input longint unsigned n);
    return {n >= 64'(RX_DEPTH - 1), n >= 64'(RX_FIFO_PROG_FULL), n <= 1, n <= 64'(RX_PROG_EMPTY)};
  endfunction

  // words in the RX FIFO by the testbench's own count: handed to tx_axis,
  // not yet taken from rx_axis (exact when nothing is in flight)
  function automatic longint unsigned rx_words();
    return sent - received;
  endfunction

  // the link carries nothing any more: every beat sent has reached the RX FIFO
  // or is held by XOFF (latency ~ 55 + CH_DELAY link cycles each way)
  task automatic quiet();
    repeat (1500) @(posedge ap_clk);
  endtask

  // sender and link quiet, TX FIFO empty (TX flags 0x3): FIFO_STATUS must
  // show exactly the RX flags of the counted words
  task automatic expect_fifo_status(input string what);
    if (tx_tvalid) fail($sformatf("FIFO_STATUS, %s: a beat still waits at tx_axis", what));
    expect_reg(af_kernel_pkg::REG_FIFO_STATUS, {24'd0, rx_flags(rx_words()), 4'b0011},
               $sformatf("FIFO_STATUS, %s, %0d words in the RX FIFO", what, rx_words()));
  endtask

  // sends beats until `sent` = n = send_limit (receiver state unchanged),
  // then lets the link go quiet
  task automatic send_until(input longint unsigned n);
    send_limit = n;
    send_enable = 1'b1;
    wait (sent == n);
    send_enable = 1'b0;
    quiet();
  endtask

  // takes beats from rx_axis until the RX FIFO holds n words by the count
  // (counted against send_limit: a beat waiting at tx_axis will be sent)
  task automatic consume_until(input longint unsigned n);
    @(negedge ap_clk);
    while (send_limit - received > n) begin
      rx_tready = 1'b1;
      @(negedge ap_clk);
    end
    rx_tready = 1'b0;
    quiet();
  endtask

  task automatic fifo_status_under_load();
    logic [31:0] v;
    longint unsigned took;
    rx_tready = 1'b0;
    if (rx_words() != 0) fail("section 7 must start with an empty RX FIFO");
    // fill to one below the XOFF threshold, then to it
    send_until(sent + 64'(RX_FIFO_PROG_FULL) - 1);
    expect_fifo_status("receiver stalled, one word below PROG_FULL");
    send_until(sent + 1);
    expect_fifo_status("receiver stalled, at PROG_FULL");
    // keep the sender pushing: the level only rises while nothing is taken
    took = received;
    tb_backpressure = 1'b0;
    send_limit = 64'hffff_ffff_ffff_ffff;
    send_enable = 1'b1;
    for (int i = 0; i < 40; i++) begin
      axil_read(af_kernel_pkg::REG_FIFO_STATUS, v);
      if (v[6] !== 1'b1 || v[5:4] !== 2'b00)
        fail($sformatf("FIFO_STATUS under load = 0x%02h: RX_PROG_FULL must be set, RX_(ALMOST_)EMPTY clear (>= %0d words held)", v, RX_FIFO_PROG_FULL));
      if (rx_words() < 64'(RX_DEPTH - 1) && v[7] !== 1'b0)
        fail($sformatf("FIFO_STATUS under load = 0x%02h: RX_ALMOST_FULL set with at most %0d words outstanding", v, rx_words()));
      repeat (50) @(posedge ap_clk);
    end
    if (!tb_backpressure) fail("the sender never saw backpressure: no load while the receiver was stalled");
    if (received != took) fail("rx_axis handshakes while the receiver was stalled");
    // stop the sender; a beat it presents (held by XOFF) still goes: AXI-Stream
    // cannot take it back. sent and tx_tvalid change only at the falling edge
    @(posedge ap_clk);
    send_limit = sent + (tx_tvalid ? 1 : 0);
    // drain to one above the XON threshold, then to it (XON brings in any held words)
    consume_until(64'(RX_PROG_EMPTY) + 1);
    expect_fifo_status("drained to PROG_EMPTY + 1");
    consume_until(64'(RX_PROG_EMPTY));
    expect_fifo_status("drained to PROG_EMPTY");
    consume_until(0);
    send_enable = 1'b0;
    send_limit = 64'hffff_ffff_ffff_ffff;
    expect_fifo_status("drained");
    // almost-full: out of reach while NFC works (the headroom is sized for it),
    // so the looped-back core ignores the XOFFs it receives (its pause flag
    // held low; the kernel's NFC runs unchanged) and the FIFO fills to DEPTH-2, DEPTH-1
    @(negedge user_clk);
    force dut.u_ip.u_core.remote_xoff = 1'b0;
    send_until(sent + 64'(RX_DEPTH) - 2);
    expect_fifo_status("XOFF ignored, DEPTH - 2");
    send_until(sent + 1);
    expect_fifo_status("XOFF ignored, DEPTH - 1");
    expect_reg(af_kernel_pkg::REG_FIFO_RX_OVERFLOW_COUNT, 0, "FIFO_RX_OVERFLOW_COUNT with DEPTH - 1 words");
    // released: the pause flag keeps 0 until the next NFC message, the XON
    // sent when the drain reaches PROG_EMPTY
    @(negedge user_clk);
    release dut.u_ip.u_core.remote_xoff;
    consume_until(0);
    expect_fifo_status("drained after the fill");
    send_limit = 64'hffff_ffff_ffff_ffff;
    rx_tready = 1'b1;
  endtask

  initial begin
    logic [31:0] v, before_drop;
    rx_tready = 1'b1;
    reset_and_wait_link();
    repeat (200) @(posedge user_clk);
    settle();

    // 1. status and constants (layout from the host header's masks)
    expect_reg(af_kernel_pkg::REG_CORE_STATUS, af_kernel_pkg::CORE_STATUS_OK, "CORE_STATUS");
    expect_reg(af_kernel_pkg::REG_CONFIGURATION,
               (32'd8 << 17) | (32'd1 << 15) | (32'($clog2(RX_DEPTH)) << 11) |
               (32'(FIFO_WIDTH) << 2) | (USE_FRAMING != 0 ? 32'h3 : 32'h0), "CONFIGURATION");
    expect_reg(af_kernel_pkg::REG_FIFO_THRESHOLDS, (32'(RX_DEPTH / 2) << 16) | 32'(RX_DEPTH / 8), "FIFO_THRESHOLDS");
    expect_reg(12'h0fc, 0, "unmapped address");

    // 2. counter reset clears everything; counts of a quiet stretch of traffic
    counter_reset_pulse();
    counting = 1'b1;
    settle();
    check_status_counters("after COUNTER_RESET");
    expect_reg(af_kernel_pkg::REG_TX_COUNT, 0, "TX_COUNT after COUNTER_RESET");
    send_enable = 1'b1;
    repeat (3000) @(posedge ap_clk);
    drain();
    settle();
    expect_reg(af_kernel_pkg::REG_TX_COUNT, 32'(tb_tx_count), "TX_COUNT");
    expect_reg(af_kernel_pkg::REG_RX_COUNT, 32'(tb_rx_count), "RX_COUNT");
    if (tb_tx_count != sent) fail("testbench TX count disagrees with its sender");
    // idle: both FIFOs empty -> prog_empty and almost_empty of TX (bits 0,1) and RX (4,5)
    expect_reg(af_kernel_pkg::REG_FIFO_STATUS, 32'h33, "FIFO_STATUS (idle)");
    // a full TX FIFO (the sender saw backpressure) must have passed almost-full
    axil_read(af_kernel_pkg::REG_FIFO_TX_OVERFLOW_COUNT, v);
    if (tb_backpressure && v == 0) fail("TX FIFO was full but FIFO_TX_OVERFLOW_COUNT is 0");

    // 7. FIFO_STATUS under load (receiver stalled, RX FIFO past its thresholds)
    fifo_status_under_load();

    // 3. counter reset while traffic flows
    send_enable = 1'b1;
    repeat (1000) @(posedge ap_clk);
    counter_reset_pulse();
    repeat (1000) @(posedge ap_clk);
    drain();
    settle();
    expect_reg(af_kernel_pkg::REG_TX_COUNT, 32'(tb_tx_count), "TX_COUNT after mid-stream COUNTER_RESET");
    expect_reg(af_kernel_pkg::REG_RX_COUNT, 32'(tb_rx_count), "RX_COUNT after mid-stream COUNTER_RESET");
    if (tb_tx_count == 0 || tb_tx_count >= sent) fail("mid-stream reset did not split the count");

    // 4. per-lane faults, each lane on its own
    for (int i = 0; i < 4; i++) begin
      @(negedge user_clk);
      // whole-vector force: Verilator 5.006 ignores a forced bit-select of a port net
      force dut.status = 13'h11ff & ~(13'd1 << i);
      repeat (10 + 7 * i) @(negedge user_clk);
      release dut.status;
      @(negedge user_clk);
      force dut.status = 13'h11ff & ~(13'd1 << (4 + i));
      repeat (20 + 5 * i) @(negedge user_clk);
      release dut.status;
    end
    @(negedge user_clk);
    force dut.status = 13'h19ff;  // soft error
    repeat (3) @(negedge user_clk);
    release dut.status;
    repeat (20) @(negedge user_clk);
    settle();
    check_status_counters("per-lane faults");
    if (c_gt[0] != 10 || c_gt[3] != 31 || c_line[1] != 25)
      fail($sformatf("forced fault durations not seen as expected: gt %0d %0d %0d %0d line %0d %0d %0d %0d", c_gt[0], c_gt[1], c_gt[2], c_gt[3], c_line[0], c_line[1], c_line[2], c_line[3]));

    // 5. link drop and restore while streaming
    axil_read(af_kernel_pkg::REG_FIFO_TX_OVERFLOW_COUNT, before_drop);
    send_enable = 1'b1;
    repeat (2000) @(posedge ap_clk);
    @(negedge user_clk);
    loss_allowed = 1'b1;
    link_ok = 1'b0;
    repeat (5000) @(negedge user_clk);
    link_ok = 1'b1;
    wait_link_up(20000);
    repeat (500) @(posedge ap_clk);
    loss_allowed = 1'b0;
    repeat (2000) @(posedge ap_clk);
    drain();
    settle();
    check_status_counters("link drop");
    if (c_chan < 5000) fail("channel down shorter than the drop");
    // the sender kept going while the link was down: the TX FIFO filled up again
    begin
      logic [31:0] after;
      axil_read(af_kernel_pkg::REG_FIFO_TX_OVERFLOW_COUNT, after);
      if (after <= before_drop) fail("FIFO_TX_OVERFLOW_COUNT did not count the TX FIFO filling during the drop");
    end
    expect_reg(af_kernel_pkg::REG_CORE_STATUS, af_kernel_pkg::CORE_STATUS_OK, "CORE_STATUS after restore");

    // 6. core reset while streaming
    send_enable = 1'b1;
    repeat (2000) @(posedge ap_clk);
    loss_allowed = 1'b1;
    axil_write(af_kernel_pkg::REG_CORE_RESET, 1);
    repeat (100) @(posedge ap_clk);
    expect_reg(af_kernel_pkg::REG_CORE_RESET, 1, "CORE_RESET readback");
    axil_write(af_kernel_pkg::REG_CORE_RESET, 0);
    wait (dut.status != 13'h11ff);
    wait_link_up(100000);
    repeat (500) @(posedge ap_clk);
    loss_allowed = 1'b0;
    repeat (2000) @(posedge ap_clk);
    drain();
    settle();
    check_status_counters("core reset");
    expect_reg(af_kernel_pkg::REG_CORE_STATUS, af_kernel_pkg::CORE_STATUS_OK, "CORE_STATUS after CORE_RESET");
    axil_read(af_kernel_pkg::REG_CHANNEL_DOWN_COUNT, v);
    $display("RESULT sent=%0d received=%0d lost_in_drop_and_reset=%0d channel_down_cycles=%0d",
             sent, received, lost, v);
    $finish;
  end

  initial watchdog(20000);
endmodule
