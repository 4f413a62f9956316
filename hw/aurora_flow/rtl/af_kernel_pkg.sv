`timescale 1ps / 1ps
// Generated from hw/aurora_flow/kernel.toml by `aurora-flow-desc regenerate`; do not edit.
// //hw/aurora_flow:desc_check fails when this file and the description disagree.
// A package of constants: each user takes some of them.
/* verilator lint_off UNUSEDPARAM */
package af_kernel_pkg;
  // [flow_control]
  localparam int LINK_BEAT_BYTES = 32;
  localparam int FIXED_INFLIGHT_BEATS = 128;
  localparam int BEATS_PER_METRE = 4;
  localparam int DEFAULT_CABLE_M = 30;
  // [link]
  localparam int LANES = 4;
  localparam real LINE_RATE_GBPS = 25.78125;
  localparam real REFCLK_MHZ = 161.1328125;
  localparam real USER_CLK_MHZ = 402.83203125;
  localparam int GEARBOX_DATA_CYCLES = 32;
  localparam int GEARBOX_PERIOD_CYCLES = 33;
  localparam int CC_CYCLES = 8;
  localparam int CC_PERIOD_CYCLES = 10000;
  // [[parameter]] defaults (derived ones are expressions in aurora_flow.sv)
  localparam int DEFAULT_USE_FRAMING = 0;
  localparam int DEFAULT_FIFO_WIDTH = 64;
  localparam int DEFAULT_RX_FIFO_SIZE = 65536;
  localparam int DEFAULT_TX_FIFO_SIZE = 8192;
  localparam int DEFAULT_INS_LOSS_NYQ = 8;
  localparam int DEFAULT_RX_EQ_MODE = 1;
  localparam int DEFAULT_DRAIN_AXI_ON_RESET = 0;
  localparam int DEFAULT_IP_RESET_CYCLES = 134217727;
  localparam int DEFAULT_XON_ON_EMPTY = 1;
  localparam int DEFAULT_STREAM_FRAME_WORDS = 0;
  // [[register]] offsets (s_axi_control)
  localparam logic [11:0] REG_CORE_RESET = 12'h010;
  localparam logic [11:0] REG_COUNTER_RESET = 12'h014;
  localparam logic [11:0] REG_CONFIGURATION = 12'h018;
  localparam logic [11:0] REG_FIFO_THRESHOLDS = 12'h01c;
  localparam logic [11:0] REG_CORE_STATUS = 12'h020;
  localparam logic [11:0] REG_STATUS_NOT_OK_COUNT = 12'h024;
  localparam logic [11:0] REG_FIFO_STATUS = 12'h028;
  localparam logic [11:0] REG_FIFO_RX_OVERFLOW_COUNT = 12'h02c;
  localparam logic [11:0] REG_FIFO_TX_OVERFLOW_COUNT = 12'h030;
  localparam logic [11:0] REG_NFC_FULL_TRIGGER_COUNT = 12'h034;
  localparam logic [11:0] REG_NFC_EMPTY_TRIGGER_COUNT = 12'h038;
  localparam logic [11:0] REG_NFC_LATENCY_COUNT = 12'h03c;
  localparam logic [11:0] REG_TX_COUNT = 12'h040;
  localparam logic [11:0] REG_RX_COUNT = 12'h044;
  localparam logic [11:0] REG_GT_NOT_READY_0_COUNT = 12'h048;
  localparam logic [11:0] REG_GT_NOT_READY_1_COUNT = 12'h04c;
  localparam logic [11:0] REG_GT_NOT_READY_2_COUNT = 12'h050;
  localparam logic [11:0] REG_GT_NOT_READY_3_COUNT = 12'h054;
  localparam logic [11:0] REG_LINE_DOWN_0_COUNT = 12'h058;
  localparam logic [11:0] REG_LINE_DOWN_1_COUNT = 12'h05c;
  localparam logic [11:0] REG_LINE_DOWN_2_COUNT = 12'h060;
  localparam logic [11:0] REG_LINE_DOWN_3_COUNT = 12'h064;
  localparam logic [11:0] REG_PLL_NOT_LOCKED_COUNT = 12'h068;
  localparam logic [11:0] REG_MMCM_NOT_LOCKED_COUNT = 12'h06c;
  localparam logic [11:0] REG_HARD_ERR_COUNT = 12'h070;
  localparam logic [11:0] REG_SOFT_ERR_COUNT = 12'h074;
  localparam logic [11:0] REG_CHANNEL_DOWN_COUNT = 12'h078;
  localparam logic [11:0] REG_FRAMES_RECEIVED = 12'h07c;
  localparam logic [11:0] REG_FRAMES_WITH_ERRORS = 12'h080;
  localparam logic [11:0] REG_RX_REALIGN_COUNT = 12'h084;
  localparam logic [11:0] REG_RX_PENDING_HALF = 12'h088;
  localparam logic [31:0] CORE_STATUS_OK = 32'h11ff;
endpackage
/* verilator lint_on UNUSEDPARAM */
