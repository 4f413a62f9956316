`timescale 1ps / 1ps
// Native flow control in immediate mode (link clock). XOFF (0xFFFF: XOFF bit
// plus maximum pause) when the RX FIFO reaches its programmable-full level,
// XON (0x0000) when it has drained to its programmable-empty level. Each
// message is held until the core accepts it (PG074 NFC handshake).
//
// XON_ON_EMPTY = 1 is the public AuroraFlow kernel's behaviour
// (pc2/AuroraFlow rtl/aurora_flow_nfc.v): an XON goes out every time the
// level falls to prog_empty from above, whether or not an XOFF preceded it,
// and after an XOFF the state machine waits for the level to leave
// prog_full before it looks at prog_empty again. XON_ON_EMPTY = 0 sends an
// XON only to end an XOFF. NFC_EMPTY_TRIGGER_COUNT then equals the public
// kernel's for the same traffic.
//
// A message can be lost on the link (a bit error in its control block: the
// receiving core drops it and reports a soft error). Two repairs, neither
// counted in the trigger counters: when the partner may be paused by a lost
// XON (an XOFF was ever sent, the last message was XON, and no beat has
// arrived for REFRESH_CYCLES), the XON is sent again, every REFRESH_CYCLES
// quiet cycles; when more than NEED_BEATS beats (the in-flight budget)
// arrive after an XOFF, the XOFF was lost and is sent again.
//
// Counts XOFFs and XONs sent and the largest number of 32 B link beats that
// still arrived between an XOFF being accepted and the following XON: the
// data that was in flight, which the FIFO headroom above PROG_FULL must hold.
module af_nfc #(
    parameter bit XON_ON_EMPTY   = 1'b1,
    parameter int REFRESH_CYCLES = 4096,
    parameter int NEED_BEATS     = 248
) (
    input  logic        clk,
    input  logic        rst_n,          // core reset: state machine
    input  logic        cnt_rst_n,      // kernel reset: counters survive CORE_RESET
    input  logic        counter_reset,
    input  logic        channel_up,
    input  logic        rx_prog_full,
    input  logic        rx_prog_empty,
    input  logic        rx_beat,
    output logic        nfc_tvalid,
    output logic [15:0] nfc_tdata,
    input  logic        nfc_tready,
    output logic [31:0] xoff_count,
    output logic [31:0] xon_count,
    output logic [31:0] max_inflight,
    output logic        refresh_sent   // a repeated message was accepted (not a trigger)
);
  typedef enum logic [2:0] {
    IDLE,        // between the thresholds (or never paused, XON_ON_EMPTY = 0)
    SEND_XOFF,
    FULL,        // XOFF sent
    SEND_XON,
    EMPTY        // XON sent, level still at prog_empty (XON_ON_EMPTY = 1)
  } state_t;
  state_t state, ret_state;
  logic paused;  // the partner was told XOFF and not yet XON
  logic ever_paused, refresh;
  logic [31:0] inflight, since_xoff, quiet;
  logic xoff_done, xon_done, quiet_long, xoff_lost;

  assign nfc_tvalid = (state == SEND_XOFF) || (state == SEND_XON);
  assign nfc_tdata  = (state == SEND_XOFF) ? 16'hffff : 16'h0000;
  assign xoff_done  = (state == SEND_XOFF) && nfc_tready;
  assign xon_done   = (state == SEND_XON) && nfc_tready;
  assign refresh_sent = refresh && (xoff_done || xon_done);
  assign quiet_long = ever_paused && !paused && quiet >= 32'(REFRESH_CYCLES);
  assign xoff_lost  = paused && since_xoff >= 32'(NEED_BEATS);

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      state <= XON_ON_EMPTY ? EMPTY : IDLE;
      ret_state <= IDLE;
      {paused, ever_paused, refresh, inflight, since_xoff, quiet} <= '0;
    end else if (!channel_up) begin
      // the partner drops its XOFF state with the channel; so do we
      state <= XON_ON_EMPTY ? EMPTY : IDLE;
      {paused, ever_paused, refresh, inflight, since_xoff, quiet} <= '0;
    end else begin
      quiet <= (rx_beat || xon_done) ? '0 : quiet + 1'b1;
      if (xoff_done) begin
        paused <= 1'b1;
        ever_paused <= 1'b1;
        if (!refresh) inflight <= '0;
        since_xoff <= '0;
      end else if (xon_done) paused <= 1'b0;
      else if (paused && rx_beat) begin
        inflight <= inflight + 1'b1;
        since_xoff <= since_xoff + 1'b1;
      end
      case (state)
        IDLE:
        if (rx_prog_full) begin
          state <= SEND_XOFF;
          refresh <= 1'b0;
        end else if (XON_ON_EMPTY && rx_prog_empty) begin
          state <= SEND_XON;
          refresh <= 1'b0;
        end else if (quiet_long) begin
          state <= SEND_XON;
          ret_state <= IDLE;
          refresh <= 1'b1;
        end else if (xoff_lost) begin
          state <= SEND_XOFF;
          refresh <= 1'b1;
        end
        SEND_XOFF: if (nfc_tready) state <= FULL;
        FULL:
        if (XON_ON_EMPTY && !rx_prog_full) state <= IDLE;
        else if (!XON_ON_EMPTY && rx_prog_empty) begin
          state <= SEND_XON;
          refresh <= 1'b0;
        end else if (xoff_lost) begin
          state <= SEND_XOFF;
          refresh <= 1'b1;
        end
        SEND_XON:
        if (nfc_tready) state <= refresh ? ret_state : (XON_ON_EMPTY ? EMPTY : IDLE);
        EMPTY:
        if (!rx_prog_empty) state <= IDLE;
        else if (quiet_long) begin
          state <= SEND_XON;
          ret_state <= EMPTY;
          refresh <= 1'b1;
        end
        default:   state <= IDLE;
      endcase
    end
  end

  always_ff @(posedge clk or negedge cnt_rst_n) begin
    if (!cnt_rst_n) begin
      xoff_count <= '0;
      xon_count <= '0;
      max_inflight <= '0;
    end else if (counter_reset) begin
      xoff_count <= '0;
      xon_count <= '0;
      max_inflight <= '0;
    end else begin
      if (xoff_done && !refresh && channel_up) xoff_count <= xoff_count + 1'b1;
      if (xon_done && !refresh && channel_up) xon_count <= xon_count + 1'b1;
      if (paused && inflight > max_inflight) max_inflight <= inflight;
    end
  end
endmodule
