`timescale 1ps / 1ps
`include "aurora_core_ports.svh"
// Test double of the generated Aurora 64B/66B core with its PG074 port list
// (synth/aurora_core_ports.svh): channel always up,
// TX user interface looped to RX one cycle later, core bytes unchanged, so
// what arrives on RX is exactly what the far core would deliver from the
// same lanes. tb_wire_format reads s_axi_tx_* to see the core-side order.
/* verilator lint_off LITENDIAN */
/* verilator lint_off UNUSEDSIGNAL */
module aurora_64b66b_0 (
    `AURORA_CORE_PORTS
);
  assign user_clk_out = gt_refclk1_p;
  assign txp = '0;
  assign txn = '1;
  assign s_axi_tx_tready = 1'b1;
  assign s_axi_nfc_tx_tready = 1'b1;
  assign {crc_valid, crc_pass_fail_n, hard_err, soft_err} = 4'b0100;
  assign {channel_up, lane_up, gt_pll_lock, mmcm_not_locked_out, gt_powergood} = 11'b1_1111_1_0_1111;
  always_ff @(posedge user_clk_out) begin
    m_axi_rx_tvalid <= s_axi_tx_tvalid;
    m_axi_rx_tdata  <= s_axi_tx_tdata;
    m_axi_rx_tkeep  <= s_axi_tx_tkeep;
    m_axi_rx_tlast  <= s_axi_tx_tlast;
  end
endmodule
