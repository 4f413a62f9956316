`timescale 1ps / 1fs
// XON semantics of the public AuroraFlow kernel (pc2/AuroraFlow
// rtl/aurora_flow_nfc.v: from `idle`, prog_empty sends an XON whether or not
// an XOFF came before; `empty` waits for the level to leave prog_empty).
// Each episode stalls the receiver while a burst of BURST words (above
// PROG_EMPTY, below PROG_FULL) arrives, then drains it with the sender
// silent, so the level falls through PROG_EMPTY exactly once. The public
// kernel sends one XON per episode and no XOFF; with XON_ON_EMPTY = 0 no
// message at all. Checks NFC_EMPTY_TRIGGER_COUNT / NFC_FULL_TRIGGER_COUNT
// against that, the XONs the testbench saw on the core's NFC port, and the
// data. Plusargs: +seed=N +episodes=N
module tb_xon;
  `include "tb_common.svh"

  localparam int RX_DEPTH = RX_FIFO_SIZE / FIFO_WIDTH;
  localparam int BURST = (RX_DEPTH / 8 + RX_FIFO_PROG_FULL) / 2;  // between the thresholds
  int unsigned episodes = 5;

  initial if ($value$plusargs("episodes=%d", episodes)) begin end

  always @(posedge ap_clk) begin
    if (rx_tvalid && rx_tready) begin
      if (rx_tdata !== pattern(received)) fail($sformatf("beat %0d lost or corrupted", received));
      received++;
    end
  end

  int unsigned tb_xon = 0, tb_xoff = 0;
  always @(posedge user_clk) begin
    if (dut.nfc_tvalid && dut.nfc_tready) begin
      if (dut.nfc_tdata == 16'h0000) tb_xon++;
      else tb_xoff++;
    end
  end

  initial begin
    reset_and_wait_link();
    rx_tready = 1'b0;
    for (int e = 0; e < int'(episodes); e++) begin
      // burst while the receiver stalls
      for (int k = 0; k < BURST; k++) begin
        @(negedge ap_clk);
        tx_tdata = pattern(sent);
        tx_tvalid = 1'b1;
        do @(posedge ap_clk); while (!tx_tready);
        sent++;
      end
      @(negedge ap_clk);
      tx_tvalid = 1'b0;
      // the output register holds one word, so the link-side level stops one short
      wait (int'(dut.rxf_wr_level) >= BURST - 1);
      repeat (100) @(posedge ap_clk);
      // drain with the sender silent: the level falls through prog_empty once
      @(negedge ap_clk);
      rx_tready = 1'b1;
      wait (received == sent);
      repeat (200) @(posedge ap_clk);
      @(negedge ap_clk);
      rx_tready = 1'b0;
    end
    settle();
    expect_reg(af_kernel_pkg::REG_NFC_EMPTY_TRIGGER_COUNT, XON_ON_EMPTY != 0 ? episodes : 0,
               "NFC_EMPTY_TRIGGER_COUNT (public kernel: one XON per fall to prog_empty)");
    expect_reg(af_kernel_pkg::REG_NFC_FULL_TRIGGER_COUNT, 0, "NFC_FULL_TRIGGER_COUNT");
    if (tb_xon != (XON_ON_EMPTY != 0 ? episodes : 0) || tb_xoff != 0)
      fail($sformatf("NFC port carried %0d XON / %0d XOFF", tb_xon, tb_xoff));
    $display("RESULT xon_on_empty=%0d episodes=%0d burst=%0d xon=%0d xoff=%0d", XON_ON_EMPTY,
             episodes, BURST, tb_xon, tb_xoff);
    $finish;
  end

  initial watchdog(20000);
endmodule
