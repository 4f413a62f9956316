// Generated from hw/aurora_flow/kernel.toml by `aurora-flow-desc regenerate`; do not edit.
// //hw/aurora_flow:desc_check fails when this file and the description disagree.
// Included in aurora_flow's body; each block refuses one illegal value (af_refuse.svh):
// at elaboration, and with an `initial $fatal` at time 0 where a tool lets that through.
if (USE_FRAMING != 0 && USE_FRAMING != 1) begin : g_err_use_framing
  `AF_REFUSE(("aurora_flow: USE_FRAMING=%0d: must be 0 or 1", USE_FRAMING))
end
if (FIFO_WIDTH != 32 && FIFO_WIDTH != 64) begin : g_err_fifo_width
  `AF_REFUSE(("aurora_flow: FIFO_WIDTH=%0d: must be 32 or 64 (bytes)", FIFO_WIDTH))
end
if ((1 << $clog2(RX_FIFO_SIZE)) != RX_FIFO_SIZE) begin : g_err_rx_fifo_size_pow2
  `AF_REFUSE(("aurora_flow: RX_FIFO_SIZE=%0d: must be a power of two (bytes)", RX_FIFO_SIZE))
end
if (RX_FIFO_SIZE / FIFO_WIDTH < 16 || RX_FIFO_SIZE / FIFO_WIDTH > 16384) begin : g_err_rx_fifo_size_depth
  `AF_REFUSE(("aurora_flow: RX_FIFO_SIZE=%0d / FIFO_WIDTH=%0d = %0d words: must be 16..16384", RX_FIFO_SIZE, FIFO_WIDTH, RX_FIFO_SIZE / FIFO_WIDTH))
end
if ((1 << $clog2(TX_FIFO_SIZE)) != TX_FIFO_SIZE) begin : g_err_tx_fifo_size_pow2
  `AF_REFUSE(("aurora_flow: TX_FIFO_SIZE=%0d: must be a power of two (bytes)", TX_FIFO_SIZE))
end
if (TX_FIFO_SIZE / FIFO_WIDTH < 16 || TX_FIFO_SIZE / FIFO_WIDTH > 16384) begin : g_err_tx_fifo_size_depth
  `AF_REFUSE(("aurora_flow: TX_FIFO_SIZE=%0d / FIFO_WIDTH=%0d = %0d words: must be 16..16384", TX_FIFO_SIZE, FIFO_WIDTH, TX_FIFO_SIZE / FIFO_WIDTH))
end
if (INS_LOSS_NYQ < 0 || INS_LOSS_NYQ > 31) begin : g_err_ins_loss_nyq_range
  `AF_REFUSE(("aurora_flow: INS_LOSS_NYQ=%0d: must be 0..31 (dB)", INS_LOSS_NYQ))
end
if (RX_EQ_MODE != 0 && RX_EQ_MODE != 1 && RX_EQ_MODE != 2) begin : g_err_rx_eq_mode
  `AF_REFUSE(("aurora_flow: RX_EQ_MODE=%0d: must be 0 (AUTO), 1 (LPM) or 2 (DFE)", RX_EQ_MODE))
end
if (DRAIN_AXI_ON_RESET != 0 && DRAIN_AXI_ON_RESET != 1) begin : g_err_drain_axi_on_reset
  `AF_REFUSE(("aurora_flow: DRAIN_AXI_ON_RESET=%0d: must be 0 or 1", DRAIN_AXI_ON_RESET))
end
if (CABLE_M < 0 || CABLE_M > 2000) begin : g_err_cable_m_range
  `AF_REFUSE(("aurora_flow: CABLE_M=%0d: must be 0..2000 (m)", CABLE_M))
end
if (XON_ON_EMPTY != 0 && XON_ON_EMPTY != 1) begin : g_err_xon_on_empty
  `AF_REFUSE(("aurora_flow: XON_ON_EMPTY=%0d: must be 0 or 1", XON_ON_EMPTY))
end
if (STREAM_FRAME_WORDS < 0 || STREAM_FRAME_WORDS > 65536) begin : g_err_stream_frame_words_range
  `AF_REFUSE(("aurora_flow: STREAM_FRAME_WORDS=%0d: must be 0..65536 (words)", STREAM_FRAME_WORDS))
end
