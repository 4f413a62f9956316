`timescale 1ps / 1ps
// Native flow control in immediate mode (link clock). XOFF (0xFFFF: XOFF bit
// plus maximum pause) when the RX FIFO reaches its programmable-full level,
// XON (0x0000) once it has drained to its programmable-empty level. Each
// message is held until the core accepts it (PG074 NFC handshake).
// Counts XOFFs and XONs sent and the largest number of 32 B link beats that
// still arrived between an XOFF being accepted and the following XON: the
// data that was in flight, which the FIFO headroom above PROG_FULL must hold.
module af_nfc (
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
    output logic [31:0] max_inflight
);
  typedef enum logic [1:0] {
    XON_STATE,
    SEND_XOFF,
    XOFF_STATE,
    SEND_XON
  } state_t;
  state_t state;
  logic [31:0] inflight;

  assign nfc_tvalid = (state == SEND_XOFF) || (state == SEND_XON);
  assign nfc_tdata  = (state == SEND_XOFF) ? 16'hffff : 16'h0000;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      state <= XON_STATE;
      inflight <= '0;
    end else if (!channel_up) begin
      // the partner drops its XOFF state with the channel; so do we
      state <= XON_STATE;
      inflight <= '0;
    end else begin
      case (state)
        XON_STATE:  if (rx_prog_full) state <= SEND_XOFF;
        SEND_XOFF:
        if (nfc_tready) begin
          state <= XOFF_STATE;
          inflight <= '0;
        end
        XOFF_STATE: begin
          if (rx_beat) inflight <= inflight + 1'b1;
          if (rx_prog_empty) state <= SEND_XON;
        end
        SEND_XON:   if (nfc_tready) state <= XON_STATE;
        default:    state <= XON_STATE;
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
      if (state == SEND_XOFF && nfc_tready && channel_up) xoff_count <= xoff_count + 1'b1;
      if (state == SEND_XON && nfc_tready && channel_up) xon_count <= xon_count + 1'b1;
      if (state == XOFF_STATE && inflight > max_inflight) max_inflight <= inflight;
    end
  end
endmodule
