`timescale 1ps / 1ps
`include "af_axil_ports.svh"
`include "af_gt_ports.svh"
`include "af_refuse.svh"
// AuroraFlow link kernel: user AXI-Stream on ap_clk <-> Aurora 64B/66B core on
// its 402.83 MHz user clock, with clock-crossing FIFOs, optional 64<->32 B
// width conversion, NFC flow control driven by the RX FIFO thresholds, a
// status/counter monitor and the AXI4-Lite register map of the public
// AuroraFlow kernel (so existing host code works). Thresholds are in FIFO
// words (FIFO_WIDTH bytes each), as in the public kernel.
module aurora_flow #(
    // defaults: kernel.toml [[parameter]] (af_kernel_pkg); thresholds in words
    parameter int USE_FRAMING        = af_kernel_pkg::DEFAULT_USE_FRAMING,
    parameter int FIFO_WIDTH         = af_kernel_pkg::DEFAULT_FIFO_WIDTH,  // bytes
    parameter int RX_FIFO_SIZE       = af_kernel_pkg::DEFAULT_RX_FIFO_SIZE,  // bytes
    parameter int RX_FIFO_PROG_FULL  = RX_FIFO_SIZE / FIFO_WIDTH / 2,
    parameter int RX_FIFO_PROG_EMPTY = RX_FIFO_SIZE / FIFO_WIDTH / 8,
    parameter int TX_FIFO_SIZE       = af_kernel_pkg::DEFAULT_TX_FIFO_SIZE,  // bytes
    parameter int TX_FIFO_PROG_FULL  = TX_FIFO_SIZE / FIFO_WIDTH / 4 * 3,
    parameter int TX_FIFO_PROG_EMPTY = TX_FIFO_SIZE / FIFO_WIDTH / 4,
    parameter int INS_LOSS_NYQ       = af_kernel_pkg::DEFAULT_INS_LOSS_NYQ,  // dB
    parameter int RX_EQ_MODE         = af_kernel_pkg::DEFAULT_RX_EQ_MODE,
    parameter int DRAIN_AXI_ON_RESET = af_kernel_pkg::DEFAULT_DRAIN_AXI_ON_RESET,
    parameter int IP_RESET_CYCLES    = af_kernel_pkg::DEFAULT_IP_RESET_CYCLES,  // init_clk cycles
    parameter int CABLE_M            = af_kernel_pkg::DEFAULT_CABLE_M,  // fibre metres: in-flight budget
    parameter int XON_ON_EMPTY       = af_kernel_pkg::DEFAULT_XON_ON_EMPTY,
    parameter int STREAM_FRAME_WORDS = af_kernel_pkg::DEFAULT_STREAM_FRAME_WORDS,  // 0: plain stream
    // behavioural core only (AURORA_SIM)
    parameter int SIM_LAT_TX         = 27,
    parameter int SIM_LAT_RX         = 27,
    parameter int SIM_CC_PERIOD      = af_kernel_pkg::CC_PERIOD_CYCLES,
    localparam int DW                = FIFO_WIDTH * 8
) (
    input  logic          ap_clk,
    input  logic          ap_rst_n,
    input  logic          init_clk,
    // user stream into the link
    input  logic [DW-1:0] tx_axis_tdata,
    input  logic          tx_axis_tvalid,
    output logic          tx_axis_tready,
    input  logic          tx_axis_tlast,                    // framing only
    input  logic [FIFO_WIDTH-1:0] tx_axis_tkeep,            // framing only, contiguous from byte 0
    // user stream out of the link
    output logic [DW-1:0] rx_axis_tdata,
    output logic          rx_axis_tvalid,
    input  logic          rx_axis_tready,
    output logic          rx_axis_tlast,
    output logic [FIFO_WIDTH-1:0] rx_axis_tkeep,
    // control
    `AF_AXIL_PORTS
    // the link: QSFP lanes, or the behavioural core's channel (AURORA_SIM)
    `AF_GT_PORTS
);
  localparam bit FRAMING = (USE_FRAMING != 0);  // the user's streams carry TLAST/TKEEP
  // the core frames the wire: the user's frames, or a stream cut into STREAM_FRAME_WORDS
  localparam bit WIRE_FRAMES = FRAMING || STREAM_FRAME_WORDS != 0;
  localparam int RX_DEPTH = RX_FIFO_SIZE / FIFO_WIDTH;
  localparam int TX_DEPTH = TX_FIFO_SIZE / FIFO_WIDTH;
  localparam int RX_AW = $clog2(RX_DEPTH);
  localparam int TX_AW = $clog2(TX_DEPTH);
  localparam int SBW = WIRE_FRAMES ? 7 : 0;  // sideband in the TX FIFO: {last, valid bytes - 1}
  localparam int FW = DW + SBW;
  // STREAM_FRAME_WORDS: the words a received frame is short of (it lost 32 B blocks), carried
  // with its last word through the RX FIFO and delivered there as zero words
  localparam bit STREAM_FRAMES = !FRAMING && STREAM_FRAME_WORDS != 0;
  localparam int PADW = STREAM_FRAME_WORDS > 1 ? $clog2(STREAM_FRAME_WORDS) : 1;
  // sideband in the RX FIFO: the user's {last, valid bytes - 1}, or the missing words
  localparam int RX_SBW = FRAMING ? 7 : (STREAM_FRAMES ? PADW : 0);
  localparam int RX_FW = DW + RX_SBW;
  localparam bit UPSIZE = (FIFO_WIDTH == 64);
  localparam int HEADROOM_BEATS = (RX_DEPTH - RX_FIFO_PROG_FULL) * FIFO_WIDTH /
      af_kernel_pkg::LINK_BEAT_BYTES;
  localparam int NEED_BEATS = af_kernel_pkg::FIXED_INFLIGHT_BEATS +
      af_kernel_pkg::BEATS_PER_METRE * CABLE_M;

  // ---------------- elaboration-time parameter checks ----------------
  // Lint, simulation and synthesis stop on these (rtl/af_refuse.svh); each message names the
  // parameter and its value.
  // each parameter's own limits (kernel.toml [[parameter]])
`include "af_param_checks.svh"
  if (FRAMING && STREAM_FRAME_WORDS != 0) begin : g_err_stream_frames
    `AF_REFUSE(("aurora_flow: STREAM_FRAME_WORDS=%0d is for streaming; with USE_FRAMING=1 the user's frames are the wire's",
                STREAM_FRAME_WORDS))
  end
  if (RX_FIFO_PROG_EMPTY >= RX_FIFO_PROG_FULL) begin : g_err_rx_thresh
    `AF_REFUSE(("aurora_flow: RX_FIFO_PROG_EMPTY=%0d must be below RX_FIFO_PROG_FULL=%0d",
                RX_FIFO_PROG_EMPTY, RX_FIFO_PROG_FULL))
  end
  if (RX_FIFO_PROG_FULL >= RX_DEPTH || RX_FIFO_PROG_EMPTY < 1) begin : g_err_rx_range
    `AF_REFUSE(("aurora_flow: RX_FIFO_PROG_FULL=%0d must be below the RX FIFO depth %0d, RX_FIFO_PROG_EMPTY=%0d at least 1",
                RX_FIFO_PROG_FULL, RX_DEPTH, RX_FIFO_PROG_EMPTY))
  end
  if (TX_FIFO_PROG_EMPTY >= TX_FIFO_PROG_FULL || TX_FIFO_PROG_FULL >= TX_DEPTH) begin : g_err_tx_thresh
    `AF_REFUSE(("aurora_flow: TX_FIFO_PROG_EMPTY=%0d < TX_FIFO_PROG_FULL=%0d < TX FIFO depth %0d is required",
                TX_FIFO_PROG_EMPTY, TX_FIFO_PROG_FULL, TX_DEPTH))
  end
  // In-flight budget (kernel.toml [flow_control]): after XOFF the RX FIFO must hold every beat
  // still on the way above PROG_FULL, or a stalled receiver loses data.
  if (HEADROOM_BEATS < NEED_BEATS) begin : g_err_headroom
    `AF_REFUSE(("aurora_flow: RX_FIFO_PROG_FULL=%0d leaves a headroom of %0d link beats ((depth %0d - prog_full %0d) words x %0d B / %0d B), but CABLE_M=%0d needs %0d (%0d + %0d x %0d m): raise RX_FIFO_SIZE or lower RX_FIFO_PROG_FULL",
                RX_FIFO_PROG_FULL, HEADROOM_BEATS, RX_DEPTH, RX_FIFO_PROG_FULL, FIFO_WIDTH,
                af_kernel_pkg::LINK_BEAT_BYTES, CABLE_M, NEED_BEATS,
                af_kernel_pkg::FIXED_INFLIGHT_BEATS, af_kernel_pkg::BEATS_PER_METRE, CABLE_M))
`ifdef __ICARUS__
    // Icarus's error names the scope, so the numbers go into the scope's path:
    // ...g_err_headroom.RX_FIFO_SIZE[8192].FIFO_WIDTH[64].headroom_beats[128].need_beats[248]
    for (genvar a = RX_FIFO_SIZE; a == RX_FIFO_SIZE; a++) begin : RX_FIFO_SIZE_
      for (genvar b = FIFO_WIDTH; b == FIFO_WIDTH; b++) begin : FIFO_WIDTH_
        for (genvar c = HEADROOM_BEATS; c == HEADROOM_BEATS; c++) begin : headroom_beats
          for (genvar d = NEED_BEATS; d == NEED_BEATS; d++) begin : need_beats
            wire refused = aurora_flow_refuses_these_parameters;
          end
        end
      end
    end
`endif
  end

  // ---------------- resets ----------------
  logic core_reset, counter_reset;
  logic ap_rst_sync_n, ap_core_rst_n, user_rst_n, user_core_rst_n, core_arst_n;
  logic user_clk;
  assign core_arst_n = ap_rst_n && !core_reset;

  af_reset_sync u_rst_ap (.clk(ap_clk), .arst_n(ap_rst_n), .rst_n(ap_rst_sync_n));
  af_reset_sync u_rst_ap_core (.clk(ap_clk), .arst_n(core_arst_n), .rst_n(ap_core_rst_n));
  af_reset_sync u_rst_user (.clk(user_clk), .arst_n(ap_rst_n), .rst_n(user_rst_n));
  af_reset_sync u_rst_user_core (.clk(user_clk), .arst_n(core_arst_n), .rst_n(user_core_rst_n));

  logic reset_pb, pma_init;
  af_ip_reset #(.RESET_CYCLES(IP_RESET_CYCLES)) u_ip_reset (
      .init_clk(init_clk),
      .arst_n  (core_arst_n),
      .reset_pb(reset_pb),
      .pma_init(pma_init)
  );

  logic counter_reset_u;
  af_sync u_cnt_rst_sync (
      .clk  (user_clk),
      .rst_n(user_rst_n),
      .d    (counter_reset),
      .q    (counter_reset_u)
  );

  // ---------------- Aurora core ----------------
  logic [255:0] ip_tx_tdata, ip_rx_tdata;
  logic ip_tx_tvalid, ip_tx_tready, ip_tx_tlast, ip_rx_tvalid, ip_rx_tlast;
  logic [4:0] ip_tx_nb, ip_rx_nb;
  logic nfc_tvalid, nfc_tready, crc_valid, crc_pass_fail_n;
  logic [15:0] nfc_tdata;
  logic [12:0] status;
  logic channel_up;
  assign channel_up = status[12];

  aurora_ip_if #(
      .FRAMING      (WIRE_FRAMES),
      .SIM_LAT_TX   (SIM_LAT_TX),
      .SIM_LAT_RX   (SIM_LAT_RX),
      .SIM_CC_PERIOD(SIM_CC_PERIOD)
  ) u_ip (
      .init_clk       (init_clk),
      .reset_pb       (reset_pb),
      .pma_init       (pma_init),
      .user_clk       (user_clk),
`ifdef AURORA_SIM
      .gt_refclk      (gt_refclk),
      .ch_tx          (ch_tx),
      .ch_rx          (ch_rx),
`else
      .gt_refclk_p    (gt_refclk_p),
      .gt_refclk_n    (gt_refclk_n),
      .gt_rxp_in      (gt_rxp_in),
      .gt_rxn_in      (gt_rxn_in),
      .gt_txp_out     (gt_txp_out),
      .gt_txn_out     (gt_txn_out),
`endif
      .tx_tdata       (ip_tx_tdata),
      .tx_tvalid      (ip_tx_tvalid),
      .tx_tready      (ip_tx_tready),
      .tx_tlast       (ip_tx_tlast),
      .tx_nbytes_m1   (ip_tx_nb),
      .rx_tdata       (ip_rx_tdata),
      .rx_tvalid      (ip_rx_tvalid),
      .rx_tlast       (ip_rx_tlast),
      .rx_nbytes_m1   (ip_rx_nb),
      .nfc_tvalid     (nfc_tvalid),
      .nfc_tdata      (nfc_tdata),
      .nfc_tready     (nfc_tready),
      .crc_valid      (crc_valid),
      .crc_pass_fail_n(crc_pass_fail_n),
      .status         (status)
  );

  // ---------------- TX: tx_axis -> FIFO -> (64->32 B) -> core ----------------
  logic [FW-1:0] txf_in, txf_out;
  logic txf_in_ready, txf_out_valid, txf_out_ready;
  logic [TX_AW:0] txf_wr_level;
  /* verilator lint_off UNUSEDSIGNAL */
  logic [TX_AW:0] txf_rd_level;  // link-side view, not needed: TX flags are kernel-side
  /* verilator lint_on UNUSEDSIGNAL */
  logic [5:0] tx_in_nb_m1;
  logic txf_last;
  logic [5:0] txf_nb;

  // valid bytes - 1 of a contiguous keep
  always_comb begin
    tx_in_nb_m1 = '0;
    for (int b = 1; b < FIFO_WIDTH; b++) if (tx_axis_tkeep[b]) tx_in_nb_m1 = 6'(b);
  end

  if (WIRE_FRAMES) begin : g_tx_sb
    logic tx_last_in;
    logic [5:0] tx_nb_in;
    if (FRAMING) begin : g_user_frames
      assign tx_last_in = tx_axis_tlast;
      assign tx_nb_in = tx_in_nb_m1;
    end else begin : g_stream_frames
      // the stream cut into frames of STREAM_FRAME_WORDS full words (no TLAST/TKEEP of its own)
      logic [16:0] tx_word;
      always_ff @(posedge ap_clk or negedge ap_core_rst_n) begin
        if (!ap_core_rst_n) tx_word <= '0;
        else if (tx_axis_tvalid && txf_in_ready)
          tx_word <= (tx_word == 17'(STREAM_FRAME_WORDS - 1)) ? '0 : tx_word + 1'b1;
      end
      assign tx_last_in = (tx_word == 17'(STREAM_FRAME_WORDS - 1));
      assign tx_nb_in = 6'(FIFO_WIDTH - 1);
      /* verilator lint_off UNUSEDSIGNAL */
      logic unused_user_frame;
      /* verilator lint_on UNUSEDSIGNAL */
      assign unused_user_frame = ^{tx_axis_tlast, tx_in_nb_m1};
    end
    assign txf_in = {tx_last_in, tx_nb_in, tx_axis_tdata};
    assign txf_last = txf_out[DW+6];
    assign txf_nb = txf_out[DW+:6];
  end else begin : g_tx_nosb
    /* verilator lint_off UNUSEDSIGNAL */
    logic unused_tx;
    /* verilator lint_on UNUSEDSIGNAL */
    assign unused_tx = ^{tx_axis_tlast, tx_in_nb_m1};
    assign txf_in = tx_axis_tdata;
    assign txf_last = 1'b0;
    assign txf_nb = 6'(FIFO_WIDTH - 1);
  end

  logic in_core_reset;
  assign in_core_reset = !ap_core_rst_n;
  assign tx_axis_tready = (in_core_reset && DRAIN_AXI_ON_RESET != 0) ? 1'b1 : txf_in_ready;

  af_async_fifo #(
      .WIDTH(FW),
      .DEPTH(TX_DEPTH)
  ) u_tx_fifo (
      .wr_clk  (ap_clk),
      .wr_rst_n(ap_core_rst_n),
      .s_data  (txf_in),
      .s_valid (tx_axis_tvalid),
      .s_ready (txf_in_ready),
      .wr_level(txf_wr_level),
      .rd_clk  (user_clk),
      .rd_rst_n(user_core_rst_n),
      .m_data  (txf_out),
      .m_valid (txf_out_valid),
      .m_ready (txf_out_ready),
      .rd_level(txf_rd_level)
  );

  if (UPSIZE) begin : g_tx_down
    af_axis_downsize #(.FRAMING(WIRE_FRAMES)) u_down (
        .clk        (user_clk),
        .rst_n      (user_core_rst_n),
        .flush      (!channel_up),
        .s_valid    (txf_out_valid),
        .s_ready    (txf_out_ready),
        .s_data     (txf_out[DW-1:0]),
        .s_last     (txf_last),
        .s_nbytes_m1(txf_nb),
        .m_valid    (ip_tx_tvalid),
        .m_ready    (ip_tx_tready),
        .m_data     (ip_tx_tdata),
        .m_last     (ip_tx_tlast),
        .m_nbytes_m1(ip_tx_nb)
    );
  end else begin : g_tx_direct
    /* verilator lint_off UNUSEDSIGNAL */
    logic unused_nb;
    /* verilator lint_on UNUSEDSIGNAL */
    assign unused_nb = txf_nb[5];
    assign ip_tx_tvalid = txf_out_valid;
    assign txf_out_ready = ip_tx_tready;
    assign ip_tx_tdata = txf_out[255:0];
    assign ip_tx_tlast = txf_last;
    assign ip_tx_nb = txf_nb[4:0];
  end

  // ---------------- RX: core -> (32->64 B) -> FIFO -> rx_axis ----------------
  logic rxw_valid, rxw_last;
  logic [DW-1:0] rxw_data;
  logic [5:0] rxw_nb;
  logic rx_holding;  // the 32 B -> 64 B assembly holds an unpaired half (RX_PENDING_HALF)
  logic [RX_FW-1:0] rxf_in, rxf_out;
  logic rxf_in_ready, rx_drop, rxf_out_valid, rxf_out_ready;
  logic [RX_AW:0] rxf_wr_level, rxf_rd_level;

  if (UPSIZE) begin : g_rx_up
    af_axis_upsize #(.FRAMING(WIRE_FRAMES)) u_up (
        .clk        (user_clk),
        .rst_n      (user_core_rst_n),
        .flush      (!channel_up),
        .s_valid    (ip_rx_tvalid),
        .s_data     (ip_rx_tdata),
        .s_last     (ip_rx_tlast),
        .s_nbytes_m1(ip_rx_nb),
        .m_valid    (rxw_valid),
        .m_data     (rxw_data),
        .m_last     (rxw_last),
        .m_nbytes_m1(rxw_nb),
        .holding    (rx_holding)
    );
  end else begin : g_rx_direct
    assign rx_holding = 1'b0;
    assign rxw_valid = ip_rx_tvalid;
    assign rxw_data = ip_rx_tdata;
    assign rxw_last = ip_rx_tlast;
    assign rxw_nb = {1'b0, ip_rx_nb};
  end

  if (FRAMING) begin : g_rx_sb
    assign rxf_in = {rxw_last, rxw_nb, rxw_data};
    assign rx_axis_tlast = rxf_out[DW+6];
    assign rx_axis_tkeep[0] = 1'b1;
    for (genvar b = 1; b < FIFO_WIDTH; b++) begin : g_keep
      assign rx_axis_tkeep[b] = !rxf_out[DW+6] || (6'(b) <= rxf_out[DW+:6]);
    end
  end else if (STREAM_FRAMES) begin : g_rx_stream_frames
    // The wire's frames are the kernel's own (the user's stream has no TLAST/TKEEP), each
    // STREAM_FRAME_WORDS words when sent. A received frame that lost 32 B blocks is shorter
    // (the assembly pads a lone last half to a word, af_axis_upsize): its last word carries
    // the words it is short of, and the read side delivers that many zero words after it,
    // so the user's stream keeps the sent word count. Frames joined by a lost LAST count
    // modulo STREAM_FRAME_WORDS.
    logic [PADW-1:0] rx_pos, rx_pos_next, rx_missing;
    assign rx_pos_next = (rx_pos == PADW'(STREAM_FRAME_WORDS - 1)) ? '0 : rx_pos + 1'b1;
    assign rx_missing = (rx_pos_next == '0) ? '0 : PADW'(STREAM_FRAME_WORDS) - rx_pos_next;
    always_ff @(posedge user_clk or negedge user_core_rst_n) begin
      if (!user_core_rst_n) rx_pos <= '0;
      else if (!channel_up) rx_pos <= '0;
      else if (rxw_valid) rx_pos <= rxw_last ? '0 : rx_pos_next;
    end
    assign rxf_in = {rxw_last ? rx_missing : PADW'(0), rxw_data};
    /* verilator lint_off UNUSEDSIGNAL */
    logic unused_rx_nb;
    /* verilator lint_on UNUSEDSIGNAL */
    assign unused_rx_nb = ^rxw_nb;

    logic [PADW-1:0] pad_left;  // zero words still to deliver before the next FIFO word
    always_ff @(posedge ap_clk or negedge ap_core_rst_n) begin
      if (!ap_core_rst_n) pad_left <= '0;
      else if (pad_left != '0) begin
        if (rx_axis_tready) pad_left <= pad_left - 1'b1;
      end else if (rxf_out_valid && rx_axis_tready) pad_left <= rxf_out[DW+:PADW];
    end
    assign rx_axis_tvalid = rxf_out_valid || pad_left != '0;
    assign rxf_out_ready = rx_axis_tready && pad_left == '0;
    assign rx_axis_tdata = (pad_left != '0) ? '0 : rxf_out[DW-1:0];
    assign rx_axis_tlast = 1'b0;
    assign rx_axis_tkeep = '1;
  end else begin : g_rx_nosb
    /* verilator lint_off UNUSEDSIGNAL */
    logic unused_rx;
    /* verilator lint_on UNUSEDSIGNAL */
    assign unused_rx = ^{rxw_last, rxw_nb};
    assign rxf_in = rxw_data;
    assign rx_axis_tlast = 1'b0;
    assign rx_axis_tkeep = '1;
  end
  if (!STREAM_FRAMES) begin : g_rx_out
    assign rx_axis_tvalid = rxf_out_valid;
    assign rxf_out_ready = rx_axis_tready;
    assign rx_axis_tdata = rxf_out[DW-1:0];
  end

  // the core cannot be stalled: a word that finds the FIFO full is lost
  assign rx_drop = rxw_valid && !rxf_in_ready;

  af_async_fifo #(
      .WIDTH(RX_FW),
      .DEPTH(RX_DEPTH)
  ) u_rx_fifo (
      .wr_clk  (user_clk),
      .wr_rst_n(user_core_rst_n),
      .s_data  (rxf_in),
      .s_valid (rxw_valid),
      .s_ready (rxf_in_ready),
      .wr_level(rxf_wr_level),
      .rd_clk  (ap_clk),
      .rd_rst_n(ap_core_rst_n),
      .m_data  (rxf_out),
      .m_valid (rxf_out_valid),
      .m_ready (rxf_out_ready),
      .rd_level(rxf_rd_level)
  );

  // ---------------- flow control ----------------
  logic [31:0] xoff_count, xon_count, max_inflight;
  // a repeated NFC message (lost-message repair); observed by the testbenches only
  /* verilator lint_off UNUSEDSIGNAL */
  logic nfc_refresh;
  /* verilator lint_on UNUSEDSIGNAL */
  af_nfc #(
      .XON_ON_EMPTY(XON_ON_EMPTY != 0),
      .NEED_BEATS  (NEED_BEATS)
  ) u_nfc (
      .clk          (user_clk),
      .rst_n        (user_core_rst_n),
      .cnt_rst_n    (user_rst_n),
      .counter_reset(counter_reset_u),
      .channel_up   (channel_up),
      .rx_prog_full (rxf_wr_level >= (RX_AW + 1)'(RX_FIFO_PROG_FULL)),
      .rx_prog_empty(rxf_wr_level <= (RX_AW + 1)'(RX_FIFO_PROG_EMPTY)),
      .rx_beat      (ip_rx_tvalid),
      .nfc_tvalid   (nfc_tvalid),
      .nfc_tdata    (nfc_tdata),
      .nfc_tready   (nfc_tready),
      .xoff_count   (xoff_count),
      .xon_count    (xon_count),
      .max_inflight (max_inflight),
      .refresh_sent (nfc_refresh)
  );

  // ---------------- monitor (link clock) ----------------
  logic [31:0] status_not_ok, pll_not_locked, mmcm_not_locked, hard_err, soft_err;
  logic [31:0] channel_down, rx_overflow, frames_received, frames_with_errors;
  logic [127:0] gt_not_ready, line_down;
  af_link_monitor u_monitor (
      .clk               (user_clk),
      .rst_n             (user_rst_n),
      .counter_reset     (counter_reset_u),
      .status            (status),
      .rx_drop           (rx_drop),
      .crc_valid         (crc_valid),
      .crc_pass_fail_n   (crc_pass_fail_n),
      .status_not_ok     (status_not_ok),
      .gt_not_ready      (gt_not_ready),
      .line_down         (line_down),
      .pll_not_locked    (pll_not_locked),
      .mmcm_not_locked   (mmcm_not_locked),
      .hard_err          (hard_err),
      .soft_err          (soft_err),
      .channel_down      (channel_down),
      .rx_overflow       (rx_overflow),
      .frames_received   (frames_received),
      .frames_with_errors(frames_with_errors)
  );

  // ---------------- realignment after a corrupted control field ----------------
  // A control-field error makes the core drop the block and raise soft_err (PG074 "Error
  // Signals"; the behavioural core, sim/model). At 64 B the lost 32 B block would shift the
  // pairing of halves; the assembly (af_axis_upsize) restarts at every frame start, the one
  // boundary the stream carries, so at most the rest of the frame the error fell in (and the
  // next one when the lost block carried TLAST) is misassembled. Each such restart is counted:
  // a soft error seen during a frame is counted at that frame's end (or the next one's).
  // A plain stream has no boundary to realign at (the public wire format carries none); with
  // STREAM_FRAME_WORDS the kernel's own frames are that boundary.
  logic [31:0] rx_realign;
  logic err_in_frame;
  always_ff @(posedge user_clk or negedge user_rst_n) begin
    if (!user_rst_n) begin
      rx_realign <= '0;
      err_in_frame <= 1'b0;
    end else begin
      if (!channel_up) err_in_frame <= 1'b0;
      else if (ip_rx_tvalid && ip_rx_tlast) err_in_frame <= 1'b0;
      else if (status[11]) err_in_frame <= 1'b1;
      if (counter_reset_u) rx_realign <= '0;
      else if (WIRE_FRAMES && channel_up && ip_rx_tvalid && ip_rx_tlast && (err_in_frame || status[11]))
        rx_realign <= rx_realign + 1'b1;
    end
  end

  localparam int BW = 14 + 32 * 21;
  logic [BW-1:0] link_bundle_u, link_bundle;
  assign link_bundle_u = {
    status, status_not_ok, rx_overflow, xoff_count, xon_count, max_inflight,
    gt_not_ready, line_down, pll_not_locked, mmcm_not_locked, hard_err, soft_err,
    channel_down, frames_received, frames_with_errors, rx_realign, rx_holding
  };
  af_cdc_bundle #(.WIDTH(BW)) u_to_ap (
      .src_clk  (user_clk),
      .src_rst_n(user_rst_n),
      .src_data (link_bundle_u),
      .dst_clk  (ap_clk),
      .dst_rst_n(ap_rst_sync_n),
      .dst_data (link_bundle)
  );

  // ---------------- kernel-clock counters ----------------
  logic [31:0] tx_count, rx_count, tx_overflow;
  logic tx_almost_full, tx_almost_full_d;
  assign tx_almost_full = txf_wr_level >= (TX_AW + 1)'(TX_DEPTH - 1);
  always_ff @(posedge ap_clk or negedge ap_rst_sync_n) begin
    if (!ap_rst_sync_n) begin
      tx_count <= '0;
      rx_count <= '0;
      tx_overflow <= '0;
      tx_almost_full_d <= 1'b0;
    end else begin
      tx_almost_full_d <= tx_almost_full;
      if (counter_reset) begin
        tx_count <= '0;
        rx_count <= '0;
        tx_overflow <= '0;
      end else begin
        if (tx_axis_tvalid && tx_axis_tready) tx_count <= tx_count + 1'b1;
        if (rx_axis_tvalid && rx_axis_tready) rx_count <= rx_count + 1'b1;
        if (tx_almost_full && !tx_almost_full_d) tx_overflow <= tx_overflow + 1'b1;
      end
    end
  end

  // FIFO_STATUS: TX flags from the kernel-side (write) level, RX flags from
  // the kernel-side (read) level
  logic [7:0] fifo_status;
  assign fifo_status = {
    rxf_rd_level >= (RX_AW + 1)'(RX_DEPTH - 1),
    rxf_rd_level >= (RX_AW + 1)'(RX_FIFO_PROG_FULL),
    rxf_rd_level <= (RX_AW + 1)'(1),
    rxf_rd_level <= (RX_AW + 1)'(RX_FIFO_PROG_EMPTY),
    tx_almost_full,
    txf_wr_level >= (TX_AW + 1)'(TX_FIFO_PROG_FULL),
    txf_wr_level <= (TX_AW + 1)'(1),
    txf_wr_level <= (TX_AW + 1)'(TX_FIFO_PROG_EMPTY)
  };

  localparam logic [31:0] CONFIGURATION = {
    10'b0,
    5'(INS_LOSS_NYQ),
    2'(RX_EQ_MODE),
    4'(RX_AW),
    9'(FIFO_WIDTH),
    FRAMING,
    FRAMING
  };
  localparam logic [31:0] FIFO_THRESHOLDS = {16'(RX_FIFO_PROG_FULL), 16'(RX_FIFO_PROG_EMPTY)};

  // unpack the bundle (same order as packed above)
  logic [12:0] a_status;
  logic [31:0] a_not_ok, a_rx_ovf, a_xoff, a_xon, a_infl, a_pll, a_mmcm, a_hard, a_soft, a_chan;
  logic [31:0] a_frames, a_frame_err, a_realign;
  logic [127:0] a_gt, a_line;
  logic a_holding;
  assign {a_status, a_not_ok, a_rx_ovf, a_xoff, a_xon, a_infl, a_gt, a_line, a_pll, a_mmcm,
          a_hard, a_soft, a_chan, a_frames, a_frame_err, a_realign, a_holding} = link_bundle;

  // The read decode: every register at its kernel.toml offset (af_kernel_pkg); other
  // addresses read as 0. The frame counters read 0 on a plain stream.
  logic [11:0] rd_addr;
  logic [31:0] rd_data;
  always_comb begin
    unique case (rd_addr)
      af_kernel_pkg::REG_CORE_RESET: rd_data = {31'd0, core_reset};
      af_kernel_pkg::REG_COUNTER_RESET: rd_data = {31'd0, counter_reset};
      af_kernel_pkg::REG_CONFIGURATION: rd_data = CONFIGURATION;
      af_kernel_pkg::REG_FIFO_THRESHOLDS: rd_data = FIFO_THRESHOLDS;
      af_kernel_pkg::REG_CORE_STATUS: rd_data = {19'd0, a_status};
      af_kernel_pkg::REG_STATUS_NOT_OK_COUNT: rd_data = a_not_ok;
      af_kernel_pkg::REG_FIFO_STATUS: rd_data = {24'd0, fifo_status};
      af_kernel_pkg::REG_FIFO_RX_OVERFLOW_COUNT: rd_data = a_rx_ovf;
      af_kernel_pkg::REG_FIFO_TX_OVERFLOW_COUNT: rd_data = tx_overflow;
      af_kernel_pkg::REG_NFC_FULL_TRIGGER_COUNT: rd_data = a_xoff;
      af_kernel_pkg::REG_NFC_EMPTY_TRIGGER_COUNT: rd_data = a_xon;
      af_kernel_pkg::REG_NFC_LATENCY_COUNT: rd_data = a_infl;
      af_kernel_pkg::REG_TX_COUNT: rd_data = tx_count;
      af_kernel_pkg::REG_RX_COUNT: rd_data = rx_count;
      af_kernel_pkg::REG_GT_NOT_READY_0_COUNT: rd_data = a_gt[31:0];
      af_kernel_pkg::REG_GT_NOT_READY_1_COUNT: rd_data = a_gt[63:32];
      af_kernel_pkg::REG_GT_NOT_READY_2_COUNT: rd_data = a_gt[95:64];
      af_kernel_pkg::REG_GT_NOT_READY_3_COUNT: rd_data = a_gt[127:96];
      af_kernel_pkg::REG_LINE_DOWN_0_COUNT: rd_data = a_line[31:0];
      af_kernel_pkg::REG_LINE_DOWN_1_COUNT: rd_data = a_line[63:32];
      af_kernel_pkg::REG_LINE_DOWN_2_COUNT: rd_data = a_line[95:64];
      af_kernel_pkg::REG_LINE_DOWN_3_COUNT: rd_data = a_line[127:96];
      af_kernel_pkg::REG_PLL_NOT_LOCKED_COUNT: rd_data = a_pll;
      af_kernel_pkg::REG_MMCM_NOT_LOCKED_COUNT: rd_data = a_mmcm;
      af_kernel_pkg::REG_HARD_ERR_COUNT: rd_data = a_hard;
      af_kernel_pkg::REG_SOFT_ERR_COUNT: rd_data = a_soft;
      af_kernel_pkg::REG_CHANNEL_DOWN_COUNT: rd_data = a_chan;
      af_kernel_pkg::REG_FRAMES_RECEIVED: rd_data = WIRE_FRAMES ? a_frames : 32'd0;
      af_kernel_pkg::REG_FRAMES_WITH_ERRORS: rd_data = WIRE_FRAMES ? a_frame_err : 32'd0;
      af_kernel_pkg::REG_RX_REALIGN_COUNT: rd_data = WIRE_FRAMES ? a_realign : 32'd0;
      // a plain 64 B stream only: a frame's end flushes a lone half (af_axis_upsize)
      af_kernel_pkg::REG_RX_PENDING_HALF: rd_data = {31'd0, !WIRE_FRAMES && a_holding};
      default: rd_data = 32'd0;
    endcase
  end

  af_axil_regs u_regs (
      .clk          (ap_clk),
      .rst_n        (ap_rst_sync_n),
      `AF_AXIL_CONNECT
      .rd_addr      (rd_addr),
      .rd_data      (rd_data),
      .core_reset   (core_reset),
      .counter_reset(counter_reset)
  );
endmodule
