// Pass-through for rings: every beat of `in` (data, keep, strb, last) to `out` at II=1.
// Free-running (ap_ctrl_none): one call moves one packet (up to and including TLAST) and
// the hardware restarts the body at once, as Vitis HLS does for free-running kernels; the
// simulation runtime calls it again after each return.
#include <ap_axi_sdata.h>
#include <ap_int.h>
#include <hls_stream.h>

#ifndef FORWARD_WIDTH
#define FORWARD_WIDTH 512
#endif

typedef ap_axiu<FORWARD_WIDTH, 0, 0, 0> forward_beat;

extern "C" void forward(hls::stream<forward_beat>& in, hls::stream<forward_beat>& out) {
#pragma HLS INTERFACE axis port = in
#pragma HLS INTERFACE axis port = out
#pragma HLS INTERFACE ap_ctrl_none port = return
    bool last = false;
forward_beats:
    while (!last) {
#pragma HLS PIPELINE II = 1
        const forward_beat beat = in.read();
        last = beat.last[0];
        out.write(beat);
    }
}
