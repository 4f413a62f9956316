`timescale 1ps / 1fs
// af_nfc (native flow control, link clock) on its own, with XON_ON_EMPTY = 1 and 0 side by
// side. The testbench drives the RX FIFO level (moving at most one word per cycle upwards,
// as the link writes, and sometimes dropping at once, as a read-side pointer update does),
// the link beats and a core that holds an NFC message off for up to MAX_WAIT cycles. Its
// reference is the rule set of the module's header comment and docs/auroraflow.md, stated
// on the level and the accepted messages, not on the module's states:
//  - XON_ON_EMPTY = 1 (the public kernel): one XOFF each time the level reaches prog_full
//    from below, one XON each time it falls to prog_empty from above, whether or not an
//    XOFF came before (after a reset or channel-up an already full level counts as
//    reaching prog_full, an already empty one not as a fall);
//  - XON_ON_EMPTY = 0: an XOFF when the level is at prog_full and the partner is not told
//    XOFF, an XON only to end that XOFF, when the level is at prog_empty;
//  - each such message is accepted within LAT cycles of the level change that asks for it,
//    is held (same code) until the core takes it, is 0xFFFF (XOFF) or 0x0000 (XON), and no
//    other message is sent, except the two repairs, which raise refresh_sent: an XON again
//    after REFRESH_CYCLES cycles without a beat (the partner was told XOFF once, the last
//    message was XON; never earlier, never while it is paused, and within LAT cycles), and
//    an XOFF again once NEED_BEATS beats (the in-flight budget) have arrived after an XOFF
//    (within LAT cycles of the NEED_BEATS-th);
//  - xoff_count / xon_count = the messages accepted that were not repairs, max_inflight =
//    the most beats that arrived after a (non-repair) XOFF was accepted and before the next
//    XON was (beats in the cycles of the two acceptances excluded), all three compared every
//    cycle; they survive the core reset (rst_n), are 0 while counter_reset is high and after
//    cnt_rst_n;
//  - channel down forgets everything: a pending message is dropped, no repair follows
//    (the partner drops its XOFF state with the channel), and channel-up starts afresh.
// Phases: silence before any XOFF (no repair), random traffic, repeated XONs in silence
// (between the thresholds and at prog_empty), silence while paused (no XON), beats after
// an XOFF past the budget (repeated XOFFs, from prog_full and from between the thresholds),
// channel down with a message pending and while paused, core reset, counter reset and
// kernel reset in mid-traffic. Plusargs: +seed=N +cycles=N (random-traffic cycles)

module af_nfc_check #(
    parameter bit XON_ON_EMPTY = 1'b1
) (
    input  logic clk,
    output logic done
);
  `include "unit_common.svh"
  localparam int REFRESH = 4096;  // the module's defaults, as the kernel instantiates it
  localparam int NEED = 248;  // the kernel's in-flight budget for 30 m (128 + 4 x 30)
  localparam int PE = 16, PF = 48, TOP = 80;  // the level thresholds and the highest level
  localparam int MAX_WAIT = 3;  // the most cycles the core holds off a message
  // a level change to the message's acceptance: one cycle to see the flag, one more from
  // prog_full to prog_empty (XON_ON_EMPTY = 1), one to present the message, MAX_WAIT
  localparam int LAT = 4 + MAX_WAIT;
  // the least number of cycles between two threshold crossings: longer than LAT, so every
  // crossing's message is out before the next crossing
  localparam int DWELL = LAT + 4;

  logic rst_n = 1'b0, cnt_rst_n = 1'b0, counter_reset = 1'b0, channel_up = 1'b0;
  logic rx_beat = 1'b0, tready_q = 1'b0, tready_hold = 1'b0;
  int level = 0;
  logic nfc_tvalid, nfc_tready, refresh_sent;
  logic [15:0] nfc_tdata;
  logic [31:0] xoff_count, xon_count, max_inflight;
  assign nfc_tready = tready_q && channel_up;  // a core with its channel down takes nothing

  af_nfc #(
      .XON_ON_EMPTY  (XON_ON_EMPTY),
      .REFRESH_CYCLES(REFRESH),
      .NEED_BEATS    (NEED)
  ) dut (
      .clk          (clk),
      .rst_n        (rst_n),
      .cnt_rst_n    (cnt_rst_n),
      .counter_reset(counter_reset),
      .channel_up   (channel_up),
      .rx_prog_full (level >= PF),
      .rx_prog_empty(level <= PE),
      // the rest by name (IEEE 1800-2017 23.3.2.3): the bench's signals are the ports' namesakes
      .rx_beat,
      .nfc_tvalid,
      .nfc_tdata,
      .nfc_tready,
      .xoff_count,
      .xon_count,
      .max_inflight,
      .refresh_sent
  );

  // ---------------- the reference ----------------
  typedef struct packed {
    logic xoff;
    logic [63:0] at;  // the cycle of the level change that asks for it
  } owed_t;
  owed_t owed[$];  // messages the thresholds asked for, not yet accepted
  longint unsigned cyc = 0, lost_at = 0;
  logic prev_full = 1'b0, prev_empty = 1'b1, told_off = 1'b0;
  logic paused = 1'b0, ever_paused = 1'b0;  // what the partner was told
  int quiet = 0, since = 0, inflight = 0;
  int unsigned n_xoff = 0, n_xon = 0, n_max = 0;  // the counters as they must read
  int unsigned trig_xoff = 0, trig_xon = 0, rep_xoff = 0, rep_xon = 0;  // totals (coverage)
  logic waiting = 1'b0;
  logic [15:0] waiting_data = '0;

  function automatic string kind(input logic xoff);
    return xoff ? "XOFF" : "XON";
  endfunction

  task automatic owe(input logic xoff);
    owed_t o;
    o.xoff = xoff;
    o.at = cyc;
    owed.push_back(o);
  endtask

  // reset or channel down: the partner forgets its XOFF, and so does the reference
  task automatic restart();
    owed.delete();
    prev_full = 1'b0;
    prev_empty = 1'b1;
    told_off = 1'b0;
    paused = 1'b0;
    ever_paused = 1'b0;
    quiet = 0;
    since = 0;
    inflight = 0;
  endtask

  always @(posedge clk) begin
    logic acc, is_xoff, full, empty;
    cyc++;
    if (!cnt_rst_n) begin
      n_xoff = 0;
      n_xon = 0;
      n_max = 0;
    end
    // the counters are registers: they show what the edges before this one did
    if (xoff_count != n_xoff || xon_count != n_xon || max_inflight != n_max)
      fail($sformatf("counters xoff %0d xon %0d max_inflight %0d, expected %0d %0d %0d",
                     xoff_count, xon_count, max_inflight, n_xoff, n_xon, n_max));
    acc = nfc_tvalid && nfc_tready;
    is_xoff = nfc_tdata == 16'hffff;
    if (nfc_tvalid && nfc_tdata != 16'hffff && nfc_tdata != 16'h0000)
      fail($sformatf("NFC code 0x%04h: immediate mode sends 0xFFFF (XOFF) or 0x0000 (XON)", nfc_tdata));
    if (waiting && rst_n && channel_up && (!nfc_tvalid || nfc_tdata != waiting_data))
      fail("an NFC message withdrawn or changed before the core took it");
    if (!rst_n) restart();
    else begin
      // the largest in-flight count, from the state before this edge
      if (cnt_rst_n && !counter_reset && paused && inflight > int'(n_max)) n_max = inflight;
      if (!channel_up) restart();
      else begin
        full  = level >= PF;
        empty = level <= PE;
        // 1. the message accepted at this edge
        if (acc && refresh_sent) begin
          if (is_xoff) begin
            if (!paused || since < NEED)
              fail($sformatf("XOFF repeated with %0d beats since the last XOFF (paused %0d): a repeat only after %0d",
                             since, paused, NEED));
            rep_xoff++;
          end else begin
            if (!ever_paused || paused || quiet < REFRESH)
              fail($sformatf("XON repeated after %0d quiet cycles (ever paused %0d, paused %0d): only after %0d, never while paused",
                             quiet, ever_paused, paused, REFRESH));
            rep_xon++;
          end
        end else if (acc) begin
          if (owed.size() == 0)
            fail($sformatf("%s sent that no threshold crossing asked for", kind(is_xoff)));
          if (owed[0].xoff != is_xoff)
            fail($sformatf("%s sent where the thresholds asked for %s (at cycle %0d)", kind(is_xoff),
                           kind(owed[0].xoff), owed[0].at));
          owed.delete(0);
          if (is_xoff) trig_xoff++;
          else trig_xon++;
          if (cnt_rst_n && !counter_reset) begin
            if (is_xoff) n_xoff++;
            else n_xon++;
          end
        end
        // 2. what the partner was told and what arrived since (the beat of an acceptance's
        //    cycle is not "between" the messages)
        if (acc && is_xoff) begin
          paused = 1'b1;
          ever_paused = 1'b1;
          since = 0;
          if (!refresh_sent) inflight = 0;
        end else if (acc) paused = 1'b0;
        else if (paused && rx_beat) begin
          inflight++;
          since++;
          if (since == NEED) lost_at = cyc;
        end
        quiet = (rx_beat || (acc && !is_xoff)) ? 0 : quiet + 1;
        // 3. what the thresholds ask for now (the flags the module sees at this edge)
        if (XON_ON_EMPTY) begin
          if (full && !prev_full) owe(1'b1);
          if (empty && !prev_empty) owe(1'b0);
        end else if (!told_off && full) begin
          owe(1'b1);
          told_off = 1'b1;
        end else if (told_off && empty) begin
          owe(1'b0);
          told_off = 1'b0;
        end
        prev_full  = full;
        prev_empty = empty;
        // 4. what is overdue
        if (owed.size() != 0 && cyc - owed[0].at > LAT)
          fail($sformatf("%s asked for at cycle %0d not accepted within %0d cycles", kind(owed[0].xoff),
                         owed[0].at, LAT));
        if (paused && since >= NEED && cyc - lost_at > LAT)
          fail($sformatf("XOFF not repeated within %0d cycles of the %0d-th beat after it", LAT, NEED));
        if (ever_paused && !paused && quiet > REFRESH + LAT)
          fail($sformatf("XON not repeated after %0d cycles without a beat", quiet));
      end
    end
    if (counter_reset || !cnt_rst_n) begin
      n_xoff = 0;
      n_xon = 0;
      n_max = 0;
    end
    waiting = nfc_tvalid && !nfc_tready && rst_n && channel_up;
    waiting_data = nfc_tdata;
  end

  // ---------------- stimulus ----------------
  logic [63:0] tr_rng, bt_rng, lv_rng, ctl_rng;
  int unsigned cycles = 200000;
  initial begin
    done = 1'b0;
    if ($value$plusargs("cycles=%d", cycles)) begin end
    tr_rng = rng_start(XON_ON_EMPTY * 8 + 1);
    bt_rng = rng_start(XON_ON_EMPTY * 8 + 2);
    lv_rng = rng_start(XON_ON_EMPTY * 8 + 3);
    ctl_rng = rng_start(XON_ON_EMPTY * 8 + 4);
  end

  // the core: takes a message at random, never later than MAX_WAIT cycles
  int held_off = 0;
  always @(posedge clk) begin
    tr_rng = xorshift(tr_rng);
    held_off = (nfc_tvalid && !nfc_tready) ? held_off + 1 : 0;
    tready_q <= !tready_hold && (held_off >= MAX_WAIT || tr_rng[40]);
  end

  // link beats: NORMAL (at p_beat percent; after an XOFF only a random in-flight budget
  // below NEED), QUIET (none), FLOOD (every cycle)
  localparam int NORMAL = 0, QUIET = 1, FLOOD = 2;
  int beat_mode = QUIET, budget = 0;
  int unsigned p_beat = 50;
  logic was_paused = 1'b0;
  always @(posedge clk) begin
    bt_rng = xorshift(bt_rng);
    // the reference's `paused` may or may not include this edge's acceptance: the budget
    // then allows one beat more, still below NEED
    if (paused && !was_paused) budget = below(bt_rng, NEED - 4);
    was_paused = paused;
    bt_rng = xorshift(bt_rng);
    case (beat_mode)
      NORMAL:
      if (!paused) rx_beat <= below(bt_rng, 100) < p_beat;
      else if (budget > 0 && below(bt_rng, 100) < p_beat) begin
        rx_beat <= 1'b1;
        budget--;
      end else rx_beat <= 1'b0;
      FLOOD: rx_beat <= 1'b1;
      default: rx_beat <= 1'b0;
    endcase
  end

  // the level: moves to a target (one word per cycle at p_move percent, or at once downwards
  // when `jump`), holds it DWELL cycles or more, then takes the next target: a random one
  // (lvl_auto) or dir_target
  int target = 0, hold = 0, dir_target = 0;
  int unsigned p_move = 100;
  logic lvl_auto = 1'b0, jump = 1'b0;
  always @(posedge clk) begin
    int next;
    lv_rng = xorshift(lv_rng);
    next = level;
    if (hold > 0) hold--;
    else if (level != target) begin
      if (jump && target < level) next = target;
      else if (below(lv_rng, 100) < p_move) next = level + (target > level ? 1 : -1);
      lv_rng = xorshift(lv_rng);
      if (next == target) hold = DWELL + below(lv_rng, 40);
    end else if (lvl_auto) begin
      target = below(lv_rng, TOP + 1);
      lv_rng = xorshift(lv_rng);
      jump = target < level && below(lv_rng, 4) == 0;
    end else begin
      target = dir_target;
      jump = 1'b0;
    end
    level <= next;
  end

  task automatic cycles_(input int n);
    repeat (n) @(negedge clk);
  endtask

  // the level to t (it finishes its current move first), held
  task automatic goto_level(input int t);
    dir_target = t;
    do @(negedge clk); while (!(target == t && level == t && hold == 0));
  endtask

  task automatic expect_at_least(input int unsigned got, input int unsigned want, input string what);
    if (got < want) fail($sformatf("%s: %0d, expected at least %0d", what, got, want));
  endtask

  task automatic random_traffic(input int unsigned n);
    int unsigned pcts[4] = '{12, 40, 80, 100};
    beat_mode = NORMAL;
    lvl_auto = 1'b1;
    for (int unsigned k = 0; k < n; k += 1000) begin
      ctl_rng = xorshift(ctl_rng);
      p_beat = pcts[below(ctl_rng, 4)];
      ctl_rng = xorshift(ctl_rng);
      p_move = pcts[below(ctl_rng, 4)];
      cycles_(1000);
    end
    lvl_auto = 1'b0;
    p_move = 100;
  endtask

  initial begin
    int unsigned base;
    cycles_(4);
    rst_n = 1'b1;
    cnt_rst_n = 1'b1;
    cycles_(4);
    channel_up = 1'b1;

    // never paused: silence between the thresholds and at prog_empty brings no repeat;
    // the fall to prog_empty sends an XON only with XON_ON_EMPTY = 1
    beat_mode = QUIET;
    goto_level(30);
    cycles_(2 * REFRESH + 100);
    goto_level(5);
    cycles_(2 * REFRESH + 100);
    if (trig_xon != (XON_ON_EMPTY ? 1 : 0) || trig_xoff != 0 || rep_xon != 0)
      fail($sformatf("before any XOFF: %0d XON, %0d XOFF, %0d repeated XON sent", trig_xon, trig_xoff,
                     rep_xon));

    random_traffic(cycles);
    expect_at_least(trig_xoff, 20, "XOFFs in random traffic");
    expect_at_least(trig_xon, 20, "XONs in random traffic");

    // repeated XON in silence after a pause: between the thresholds, then at prog_empty
    beat_mode = QUIET;
    goto_level(60);
    goto_level(5);
    goto_level(30);
    base = rep_xon;
    cycles_(3 * REFRESH + 100);
    expect_at_least(rep_xon - base, 3, "XON repeats in 3 x REFRESH_CYCLES between the thresholds");
    goto_level(5);
    base = rep_xon;
    cycles_(2 * REFRESH + 100);
    expect_at_least(rep_xon - base, 2, "XON repeats in 2 x REFRESH_CYCLES at prog_empty");

    // silence while paused: no XON (beats on the way up, so that no repeat is due as the
    // level crosses the thresholds)
    beat_mode = NORMAL;
    goto_level(60);
    beat_mode = QUIET;
    base = rep_xon;
    cycles_(2 * REFRESH + 100);
    if (!paused || rep_xon != base) fail("an XON repeated while the partner is paused");

    // beats past the budget after an XOFF: the XOFF is repeated, at prog_full and between
    // the thresholds; the repeats count in neither trigger counter nor restart max_inflight
    base = rep_xoff;
    beat_mode = FLOOD;
    wait (rep_xoff == base + 2);
    beat_mode = QUIET;
    goto_level(30);
    beat_mode = FLOOD;
    wait (rep_xoff == base + 3);
    beat_mode = QUIET;
    expect_at_least(n_max, 3 * NEED, "max_inflight after three budgets of beats");
    goto_level(5);

    // channel down with an XOFF waiting for the core, then up with the level still full
    beat_mode = NORMAL;
    tready_hold = 1'b1;
    dir_target = 60;
    wait (nfc_tvalid);
    @(negedge clk);
    channel_up = 1'b0;
    tready_hold = 1'b0;
    goto_level(60);
    cycles_(20);
    base = trig_xoff;
    channel_up = 1'b1;
    wait (paused);
    if (trig_xoff != base + 1) fail("no XOFF after channel-up with the level at prog_full");

    // channel down while paused, up with the level between the thresholds: nothing to repair
    beat_mode = QUIET;
    channel_up = 1'b0;
    goto_level(30);
    channel_up = 1'b1;
    base = rep_xon + rep_xoff;
    cycles_(2 * REFRESH + 100);
    if (rep_xon + rep_xoff != base) fail("a repeat after channel-up, with nothing sent since");

    // core reset, counter reset and kernel reset in mid-traffic (random levels and beats)
    beat_mode = NORMAL;
    lvl_auto = 1'b1;
    ctl_rng = xorshift(ctl_rng);
    cycles_(1000 + below(ctl_rng, 5000));
    rst_n = 1'b0;
    cycles_(5);
    rst_n = 1'b1;
    ctl_rng = xorshift(ctl_rng);
    cycles_(1000 + below(ctl_rng, 5000));
    counter_reset = 1'b1;
    cycles_(30);
    counter_reset = 1'b0;
    ctl_rng = xorshift(ctl_rng);
    cycles_(1000 + below(ctl_rng, 5000));
    cnt_rst_n = 1'b0;
    cycles_(3);
    cnt_rst_n = 1'b1;
    random_traffic(20000);
    expect_at_least(n_max, 1, "max_inflight after the kernel reset and 20,000 cycles of traffic");
    beat_mode = QUIET;
    goto_level(5);
    cycles_(100);
    $display("RESULT af_nfc XON_ON_EMPTY=%0d XOFF=%0d XON=%0d repeated XOFF=%0d XON=%0d max_inflight=%0d",
             XON_ON_EMPTY, trig_xoff, trig_xon, rep_xoff, rep_xon, max_inflight);
    done = 1'b1;
  end
endmodule

module tb_unit_nfc;
  logic clk = 1'b0;
  logic done_public, done_after_xoff;
  initial forever #(1241ps) clk = !clk;  // the link clock, 402.83 MHz

  af_nfc_check #(.XON_ON_EMPTY(1'b1)) u_xon_on_empty (
      .clk (clk),
      .done(done_public)
  );
  af_nfc_check #(.XON_ON_EMPTY(1'b0)) u_xon_after_xoff (
      .clk (clk),
      .done(done_after_xoff)
  );

  initial begin
    wait (done_public && done_after_xoff);
    $finish;
  end
  `AF_UNIT_TIMEOUT(5000)
endmodule
