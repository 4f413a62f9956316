`timescale 1ps / 1fs
`include "af_axil_ports.svh"
// Wire compatibility with the public AuroraFlow kernel, checked against its byte-lane table
// (sim/tb/public_lane_map.svh, stated from the public sources, not derived from our RTL).
// The whole kernel (generated-core build: aurora_ip_if with the core's port list, its test
// double sim/tb/aurora_core_loopback.sv looping TX to RX) gets frames whose every byte has its
// own value, one frame for each length of the last word; each 32 B beat at the core's pins is
// compared with the table: every valid stream byte at its beat, core byte and keep bit, no
// other keep bit set, TLAST on the word's last beat, a beat only where the table puts a valid
// byte. The receive side must give back the stream words (data, TKEEP, TLAST), so a frame the
// public kernel sends arrives intact, and vice versa.
module tb_wire_format #(
    parameter int FIFO_WIDTH = 64
);
`include "public_lane_map.svh"
  localparam int DW = FIFO_WIDTH * 8;

  logic ap_clk = 1'b0, refclk = 1'b0, init_clk = 1'b0, ap_rst_n = 1'b0;
  initial forever #(1667ps) ap_clk = !ap_clk;
  initial forever #(1241ps) refclk = !refclk;
  initial forever #(5ns) init_clk = !init_clk;

  logic [DW-1:0] tx_tdata = '0, rx_tdata;
  logic [FIFO_WIDTH-1:0] tx_tkeep = '1, rx_tkeep;
  logic tx_tvalid = 1'b0, tx_tready, tx_tlast = 1'b0, rx_tvalid, rx_tlast;
  // the control port, idle
  logic [11:0] s_axi_control_awaddr = '0, s_axi_control_araddr = '0;
  logic s_axi_control_awvalid = 1'b0, s_axi_control_wvalid = 1'b0, s_axi_control_arvalid = 1'b0;
  logic s_axi_control_bready = 1'b1, s_axi_control_rready = 1'b1;
  logic [31:0] s_axi_control_wdata = '0;
  logic [3:0] s_axi_control_wstrb = '0;
  /* verilator lint_off UNUSEDSIGNAL */
  logic s_axi_control_awready, s_axi_control_wready, s_axi_control_bvalid;
  logic s_axi_control_arready, s_axi_control_rvalid;
  logic [1:0] s_axi_control_bresp, s_axi_control_rresp;
  logic [31:0] s_axi_control_rdata;
  logic [3:0] txp, txn;
  /* verilator lint_on UNUSEDSIGNAL */

  aurora_flow #(
      .USE_FRAMING    (1),
      .FIFO_WIDTH     (FIFO_WIDTH),
      .IP_RESET_CYCLES(300)
  ) dut (
      .ap_clk        (ap_clk),
      .ap_rst_n      (ap_rst_n),
      .init_clk      (init_clk),
      .tx_axis_tdata (tx_tdata),
      .tx_axis_tvalid(tx_tvalid),
      .tx_axis_tready(tx_tready),
      .tx_axis_tlast (tx_tlast),
      .tx_axis_tkeep (tx_tkeep),
      .rx_axis_tdata (rx_tdata),
      .rx_axis_tvalid(rx_tvalid),
      .rx_axis_tready(1'b1),
      .rx_axis_tlast (rx_tlast),
      .rx_axis_tkeep (rx_tkeep),
      `AF_AXIL_CONNECT
      .gt_refclk_p   (refclk),
      .gt_refclk_n   (!refclk),
      .gt_rxp_in     (4'h0),
      .gt_rxn_in     (4'hf),
      .gt_txp_out    (txp),
      .gt_txn_out    (txn)
  );

  // ---------------- what the core's TX pins see ----------------
  /* verilator lint_off LITENDIAN */
  typedef logic [0:255] core_data_t;
  typedef logic [0:31] core_keep_t;
  /* verilator lint_on LITENDIAN */
  core_data_t core_data[$];
  core_keep_t core_keep[$];
  logic core_last[$];
  always @(posedge dut.user_clk) begin
    if (dut.u_ip.g_framing.u_core.s_axi_tx_tvalid && dut.u_ip.g_framing.u_core.s_axi_tx_tready) begin
      core_data.push_back(dut.u_ip.g_framing.u_core.s_axi_tx_tdata);
      core_keep.push_back(dut.u_ip.g_framing.u_core.s_axi_tx_tkeep);
      core_last.push_back(dut.u_ip.g_framing.u_core.s_axi_tx_tlast);
    end
  end

  // ---------------- what rx_axis gives back ----------------
  logic [DW-1:0] rx_data[$];
  logic [FIFO_WIDTH-1:0] rx_keep[$];
  logic rx_last[$];
  always @(posedge ap_clk) begin
    if (rx_tvalid) begin
      rx_data.push_back(rx_tdata);
      rx_keep.push_back(rx_tkeep);
      rx_last.push_back(rx_tlast);
    end
  end

  // ---------------- the words sent ----------------
  logic [DW-1:0] sent_data[$];
  logic [FIFO_WIDTH-1:0] sent_keep[$];
  logic sent_last[$];
  int errors = 0;

  function automatic logic [DW-1:0] word(input int j);
    logic [DW-1:0] w;
    for (int b = 0; b < FIFO_WIDTH; b++) w[8*b+:8] = 8'(b + 64 * j);  // distinct within a word
    return w;
  endfunction

  task automatic send(input logic [DW-1:0] d, input int nbytes, input logic last);
    logic [FIFO_WIDTH-1:0] keep;
    for (int b = 0; b < FIFO_WIDTH; b++) keep[b] = (b < nbytes);
    @(negedge ap_clk);
    tx_tdata = d;
    tx_tlast = last;
    tx_tkeep = keep;
    tx_tvalid = 1'b1;
    do @(posedge ap_clk); while (!tx_tready);
    sent_data.push_back(d);
    sent_keep.push_back(tx_tkeep);
    sent_last.push_back(last);
    @(negedge ap_clk);
    tx_tvalid = 1'b0;
  endtask

  task automatic error(input string msg);
    $display("FAIL %s", msg);
    errors++;
  endtask

  // One stream word against the core beats it became (popped from the queues).
  task automatic check_core_beats(input int w, input logic [DW-1:0] d,
                                  input logic [FIFO_WIDTH-1:0] keep, input logic last);
    int beats = 0;
    core_data_t beat_data[2];
    core_keep_t beat_keep[2], claimed[2];
    logic beat_last[2];
    for (int b = 0; b < FIFO_WIDTH; b++) if (keep[b] && PUBLIC_BEAT[b] + 1 > beats) beats = PUBLIC_BEAT[b] + 1;
    for (int h = 0; h < beats; h++) begin
      if (core_data.size() == 0) begin
        error($sformatf("word %0d: %0d core beats expected, %0d seen", w, beats, h));
        return;
      end
      beat_data[h] = core_data.pop_front();
      beat_keep[h] = core_keep.pop_front();
      beat_last[h] = core_last.pop_front();
      claimed[h] = '0;
    end
    for (int b = 0; b < FIFO_WIDTH; b++) begin
      if (keep[b]) begin
        int h = PUBLIC_BEAT[b], k = PUBLIC_CORE_BYTE[b];
        if (beat_data[h][8*k+:8] !== d[8*b+:8])
          error($sformatf("word %0d: stream byte %0d (0x%02h) must be core beat %0d byte %0d, which holds 0x%02h",
                          w, b, d[8*b+:8], h, k, beat_data[h][8*k+:8]));
        if (beat_keep[h][k] !== 1'b1)
          error($sformatf("word %0d: stream byte %0d: core beat %0d keep bit %0d not set", w, b, h, k));
        claimed[h][k] = 1'b1;
      end
    end
    for (int h = 0; h < beats; h++) begin
      if (beat_keep[h] !== claimed[h])
        error($sformatf("word %0d core beat %0d: keep %b, the table gives %b", w, h, beat_keep[h], claimed[h]));
      if (beat_last[h] !== (last && h == beats - 1))
        error($sformatf("word %0d core beat %0d: tlast=%b", w, h, beat_last[h]));
    end
  endtask

  initial begin
    int j = 0;
    repeat (20) @(posedge ap_clk);
    ap_rst_n = 1'b1;
    wait (dut.channel_up);
    repeat (50) @(posedge ap_clk);
    // a full word, then a last word of every length
    for (int n = 1; n <= FIFO_WIDTH; n++) begin
      send(word(j), FIFO_WIDTH, 1'b0);
      j++;
      send(word(j), n, 1'b1);
      j++;
    end
    repeat (400) @(posedge ap_clk);
    if (sent_data.size() != 2 * FIFO_WIDTH) error("not every word was sent");
    for (int w = 0; w < sent_data.size(); w++)
      check_core_beats(w, sent_data[w], sent_keep[w], sent_last[w]);
    if (core_data.size() != 0) error($sformatf("%0d core beats more than the table gives", core_data.size()));
    if (rx_data.size() != sent_data.size())
      error($sformatf("rx_axis: %0d words back, %0d sent", rx_data.size(), sent_data.size()));
    for (int w = 0; w < sent_data.size() && w < rx_data.size(); w++) begin
      logic [DW-1:0] mask;
      for (int b = 0; b < FIFO_WIDTH; b++) mask[8*b+:8] = {8{sent_keep[w][b]}};
      if ((rx_data[w] & mask) !== (sent_data[w] & mask) || rx_keep[w] !== sent_keep[w] ||
          rx_last[w] !== sent_last[w])
        error($sformatf("rx_axis word %0d: %h keep %h last %b, sent %h keep %h last %b", w,
                        rx_data[w], rx_keep[w], rx_last[w], sent_data[w], sent_keep[w], sent_last[w]));
    end
    if (errors != 0) $fatal(1, "wire format differs from the public AuroraFlow kernel (%0d errors)", errors);
    $display("RESULT %0d B: %0d words, every last-word length: every byte on the public kernel's core byte and beat, keep and TLAST likewise, rx_axis gives them back",
             FIFO_WIDTH, sent_data.size());
    $finish;
  end
endmodule
