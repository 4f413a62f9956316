`timescale 1ps / 1ps
// Behavioural model of one Aurora 64B/66B core (4 lanes x 25.78125 Gbps,
// 32 B user interface, immediate NFC, optional framing with CRC-32) with the
// user-side behaviour AuroraFlow depends on (PG074):
//  - TX ready drops 1 cycle in 33 (64b/66b gearbox: 32 of 33 slots carry
//    payload, 103.125 Gb/s raw -> 100 Gb/s) and CC_LEN cycles every CC_PERIOD
//    cycles (clock compensation); the cycle after an NFC message is accepted;
//    and, in framing mode, one cycle after each frame end (separator + CRC).
//  - TX->RX latency through both cores is LAT_TX + LAT_RX + 1 cycles
//    (default 55, PG074 "Latency" for UltraScale+ GTY), plus the channel.
//  - NFC: only the XOFF bit (tdata[8] here, bit 7 in PG074's [0:15]
//    numbering) is modelled; AuroraFlow only sends XOFF 0xFFFF / XON 0x0000,
//    so pause counts are not.
//  - A received XOFF stops this core's TX until XON; the reaction therefore
//    takes the partner's TX latency + channel + this core's RX latency.
//  - Control fields carry a parity bit; a word that fails it is dropped and
//    raises soft_err for one cycle (64b/66b invalid block). A clock-
//    compensation word (CH_CC) is marked so an elastic buffer can drop it.
//  - After reset: power good and PLL lock, then lane_up once light from the
//    partner has been seen for LANE_UP_DELAY cycles, then channel_up once the
//    partner reports its lanes up for CHANNEL_UP_DELAY cycles. Loss of light
//    drops lanes and channel at once; data received while down is discarded.
// The serial side is a wide per-cycle word (see the CH_* bit positions)
// carried by aurora_sim_channel instead of the GT pins.
module aurora_sim_ip #(
    parameter bit FRAMING          = 1'b0,
    parameter int LAT_TX           = 27,
    parameter int LAT_RX           = 27,
    parameter int CC_PERIOD        = af_kernel_pkg::CC_PERIOD_CYCLES,
    parameter int CC_LEN           = af_kernel_pkg::CC_CYCLES,
    parameter int POWER_UP_DELAY   = 16,
    parameter int LANE_UP_DELAY    = 64,
    parameter int CHANNEL_UP_DELAY = 32,
    localparam int CH_W            = 302
) (
    input  logic            user_clk,
    input  logic            reset_pb,
    input  logic            pma_init,
    // user interface (user_clk)
    input  logic [255:0]    s_axi_tx_tdata,
    input  logic            s_axi_tx_tvalid,
    output logic            s_axi_tx_tready,
    input  logic            s_axi_tx_tlast,
    input  logic [4:0]      s_axi_tx_nbytes_m1,
    output logic [255:0]    m_axi_rx_tdata,
    output logic            m_axi_rx_tvalid,
    output logic            m_axi_rx_tlast,
    output logic [4:0]      m_axi_rx_nbytes_m1,
    input  logic            s_axi_nfc_tx_tvalid,
    input  logic [15:0]     s_axi_nfc_tx_tdata,
    output logic            s_axi_nfc_tx_tready,
    output logic            crc_valid,
    output logic            crc_pass_fail_n,
    // status
    output logic [3:0]      gt_powergood,
    output logic [3:0]      lane_up,
    output logic            gt_pll_lock,
    output logic            mmcm_not_locked,
    output logic            hard_err,
    output logic            soft_err,
    output logic            channel_up,
    // serial side
    output logic [CH_W-1:0] ch_tx,
    input  logic [CH_W-1:0] ch_rx
);
  // channel word layout
  localparam int CH_CRC = 256, CH_NB = 288, CH_LAST = 293, CH_VALID = 294;
  localparam int CH_NFC_VALID = 295, CH_NFC_XOFF = 296, CH_LANES_UP = 297, CH_LIGHT = 298;
  // CH_CC marks a clock-compensation word (the receiving elastic buffer may drop or repeat
  // it). CH_PAR_D / CH_PAR_N are even parity over the control fields of the data block (NB,
  // LAST, VALID, CC) and of the NFC block (NFC_VALID, NFC_XOFF): in 64b/66b these are the sync
  // header and block type, whose valid codes are far enough apart that a bit error yields an
  // invalid block, which the core drops and reports as a soft error. A word carries a data and
  // an NFC block side by side (separate blocks on the lanes), each dropped on its own. Payload
  // and CRC bits are not covered (the CRC covers the payload).
  localparam int CH_CC = 299, CH_PAR_D = 300, CH_PAR_N = 301;

  function automatic logic data_parity(input logic [CH_W-1:0] w);
    return ^{w[CH_NB+:5], w[CH_LAST], w[CH_VALID], w[CH_CC]};
  endfunction
  function automatic logic nfc_parity(input logic [CH_W-1:0] w);
    return ^{w[CH_NFC_VALID], w[CH_NFC_XOFF]};
  endfunction

  function automatic logic [31:0] crc32_update(input logic [31:0] crc_in, input logic [255:0] data,
                                               input int nbytes);
    logic [31:0] c;
    c = crc_in;
    for (int b = 0; b < 32; b++) begin
      if (b < nbytes) begin
        c = c ^ {24'b0, data[8*b+:8]};
        for (int k = 0; k < 8; k++) c = c[0] ? ((c >> 1) ^ 32'hEDB88320) : (c >> 1);
      end
    end
    return c;
  endfunction

  // ---------------- reset and link bring-up ----------------
  logic [1:0] rst_sync;
  logic rst;
  always_ff @(posedge user_clk) rst_sync <= {rst_sync[0], reset_pb || pma_init};
  assign rst = rst_sync[1];

  int unsigned pu_cnt, lane_cnt, chan_cnt;
  logic powered;
  logic rx_light, rx_lanes_up;
  assign rx_light    = ch_rx[CH_LIGHT];
  assign rx_lanes_up = ch_rx[CH_LANES_UP];

  always_ff @(posedge user_clk) begin
    if (rst) begin
      pu_cnt <= 0;
      powered <= 1'b0;
    end else if (pu_cnt < POWER_UP_DELAY) pu_cnt <= pu_cnt + 1;
    else powered <= 1'b1;

    if (rst || !powered || !rx_light) begin
      lane_cnt <= 0;
      lane_up  <= 4'h0;
    end else if (lane_cnt < LANE_UP_DELAY) lane_cnt <= lane_cnt + 1;
    else lane_up <= 4'hf;

    if (rst || lane_up != 4'hf || !rx_lanes_up || !rx_light) begin
      chan_cnt   <= 0;
      channel_up <= 1'b0;
    end else if (chan_cnt < CHANNEL_UP_DELAY) chan_cnt <= chan_cnt + 1;
    else channel_up <= 1'b1;
  end

  assign gt_powergood    = {4{powered}};
  assign gt_pll_lock     = powered;
  assign mmcm_not_locked = !powered;
  assign hard_err        = 1'b0;

  // ---------------- transmit ----------------
  // the gearbox's one idle cycle per period (kernel.toml [link])
  localparam int GB_LAST = af_kernel_pkg::GEARBOX_PERIOD_CYCLES - 1;
  int unsigned gb_cnt, cc_cnt;
  logic gearbox_pause, cc_active;
  logic nfc_pause, sep_pause, remote_xoff;
  logic [31:0] tx_crc;

  always_ff @(posedge user_clk) begin
    if (rst || !powered) begin
      gb_cnt <= 0;
      cc_cnt <= 0;
    end else begin
      gb_cnt <= (gb_cnt == GB_LAST) ? 0 : gb_cnt + 1;
      cc_cnt <= (cc_cnt == CC_PERIOD - 1) ? 0 : cc_cnt + 1;
    end
  end
  assign gearbox_pause = (gb_cnt == GB_LAST);
  assign cc_active = (cc_cnt < CC_LEN);

  assign s_axi_nfc_tx_tready = channel_up && s_axi_nfc_tx_tvalid && !gearbox_pause && !cc_active;
  assign s_axi_tx_tready = channel_up && !gearbox_pause && !cc_active && !nfc_pause &&
      !sep_pause && !remote_xoff;

  /* verilator lint_off UNUSEDSIGNAL */
  logic [15:0] nfc_unused;
  /* verilator lint_on UNUSEDSIGNAL */
  assign nfc_unused = s_axi_nfc_tx_tdata;

  logic tx_fire;
  logic [CH_W-1:0] tx_word;
  logic [31:0] tx_crc_next;
  assign tx_fire = s_axi_tx_tvalid && s_axi_tx_tready;
  assign tx_crc_next = crc32_update(tx_crc, s_axi_tx_tdata,
                                    (FRAMING && s_axi_tx_tlast) ? int'(s_axi_tx_nbytes_m1) + 1 : 32);

  always_comb begin
    tx_word = '0;
    if (tx_fire) begin
      tx_word[255:0] = s_axi_tx_tdata;
      tx_word[CH_VALID] = 1'b1;
      if (FRAMING && s_axi_tx_tlast) begin
        tx_word[CH_LAST] = 1'b1;
        tx_word[CH_NB+:5] = s_axi_tx_nbytes_m1;
        tx_word[CH_CRC+:32] = ~tx_crc_next;
      end
    end
    if (s_axi_nfc_tx_tready) begin
      tx_word[CH_NFC_VALID] = 1'b1;
      tx_word[CH_NFC_XOFF] = s_axi_nfc_tx_tdata[8];
    end
    if (cc_active && channel_up) tx_word[CH_CC] = 1'b1;
    tx_word[CH_PAR_D] = data_parity(tx_word);
    tx_word[CH_PAR_N] = nfc_parity(tx_word);
  end

  always_ff @(posedge user_clk) begin
    if (rst || !channel_up) begin
      nfc_pause <= 1'b0;
      sep_pause <= 1'b0;
      tx_crc <= '1;
    end else begin
      nfc_pause <= s_axi_nfc_tx_tready;
      sep_pause <= FRAMING && tx_fire && s_axi_tx_tlast;
      if (tx_fire) tx_crc <= (FRAMING && s_axi_tx_tlast) ? '1 : tx_crc_next;
    end
  end

  logic [CH_W-1:0] tx_line;
  af_delay_line #(
      .WIDTH(CH_W),
      .DELAY(LAT_TX)
  ) u_tx_pipe (
      .clk(user_clk),
      .d  (tx_word),
      .q  (tx_line)
  );

  always_comb begin
    ch_tx = tx_line;
    ch_tx[CH_LIGHT] = powered && !rst;
    ch_tx[CH_LANES_UP] = (lane_up == 4'hf);
  end

  // ---------------- receive ----------------
  logic [CH_W-1:0] rx_in, rx_word;
  logic rx_data_err, rx_nfc_err;
  // a block whose control fields fail the check is invalid: dropped, soft error
  assign rx_data_err = channel_up && (data_parity(ch_rx) != ch_rx[CH_PAR_D]);
  assign rx_nfc_err = channel_up && (nfc_parity(ch_rx) != ch_rx[CH_PAR_N]);
  always_comb begin
    rx_in = '0;
    if (!rx_data_err && ch_rx[CH_VALID]) begin
      rx_in[255:0] = ch_rx[255:0];
      rx_in[CH_CRC+:32] = ch_rx[CH_CRC+:32];
      rx_in[CH_NB+:5] = ch_rx[CH_NB+:5];
      rx_in[CH_LAST] = ch_rx[CH_LAST];
      rx_in[CH_VALID] = 1'b1;
    end
    if (!rx_nfc_err && ch_rx[CH_NFC_VALID]) begin
      rx_in[CH_NFC_VALID] = 1'b1;
      rx_in[CH_NFC_XOFF] = ch_rx[CH_NFC_XOFF];
    end
  end
  always_ff @(posedge user_clk) soft_err <= !rst && (rx_data_err || rx_nfc_err);
  af_delay_line #(
      .WIDTH(CH_W),
      .DELAY(LAT_RX)
  ) u_rx_pipe (
      .clk(user_clk),
      .d  (rx_in),
      .q  (rx_word)
  );

  logic [31:0] rx_crc, rx_crc_next;
  logic rx_fire;
  assign rx_fire = channel_up && rx_word[CH_VALID];
  assign rx_crc_next = crc32_update(rx_crc, rx_word[255:0],
                                    (FRAMING && rx_word[CH_LAST]) ? int'(rx_word[CH_NB+:5]) + 1 : 32);

  always_ff @(posedge user_clk) begin
    if (rst || !channel_up) begin
      m_axi_rx_tvalid <= 1'b0;
      crc_valid <= 1'b0;
      crc_pass_fail_n <= 1'b1;
      rx_crc <= '1;
      remote_xoff <= 1'b0;
    end else begin
      m_axi_rx_tvalid <= rx_fire;
      m_axi_rx_tdata <= rx_word[255:0];
      m_axi_rx_tlast <= FRAMING && rx_word[CH_LAST];
      m_axi_rx_nbytes_m1 <= rx_word[CH_NB+:5];
      crc_valid <= 1'b0;
      if (rx_fire) begin
        if (FRAMING && rx_word[CH_LAST]) begin
          crc_valid <= 1'b1;
          crc_pass_fail_n <= (~rx_crc_next == rx_word[CH_CRC+:32]);
          rx_crc <= '1;
        end else rx_crc <= rx_crc_next;
      end
      if (rx_word[CH_NFC_VALID]) remote_xoff <= rx_word[CH_NFC_XOFF];
    end
  end
endmodule
