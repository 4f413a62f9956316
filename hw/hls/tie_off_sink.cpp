// Tie-off of a link kernel's unused receive direction (the `rx_axis` of a FINN cable whose cut
// runs the other way; v++ rejects a dangling AXI-Stream port, and FINN+ 1.6.1 parks an HLS
// rx_dummy_kernel there). Free-running (ap_ctrl_none): each call drains one beat of `in` and
// counts it in count[0] (one 64-bit word of HBM), so the host can see that a peer sent on a
// direction the partition plan does not use. Nothing should ever arrive; the count says so.
#include <ap_axi_sdata.h>
#include <ap_int.h>
#include <hls_stream.h>

#ifndef TIE_OFF_WIDTH
#define TIE_OFF_WIDTH 512
#endif

typedef ap_axiu<TIE_OFF_WIDTH, 0, 0, 0> tie_off_beat;

extern "C" void tie_off_sink(hls::stream<tie_off_beat>& in, ap_uint<64>* count) {
#pragma HLS INTERFACE axis port = in
#pragma HLS INTERFACE m_axi port = count offset = slave bundle = gmem depth = 1
#pragma HLS INTERFACE s_axilite port = count bundle = control
#pragma HLS INTERFACE ap_ctrl_none port = return
    in.read();
    count[0] = count[0] + ap_uint<64>(1);
}
