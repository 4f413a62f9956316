// Tie-off of a link kernel's unused send direction (the `tx_axis` of a FINN cable whose cut
// runs the other way; v++ rejects a dangling AXI-Stream port, and FINN+ 1.6.1 parks an HLS
// tx_dummy_kernel there). Free-running (ap_ctrl_none) and empty: TVALID is never asserted,
// so the link kernel sends nothing; in simulation one call returns at once and the runtime
// closes the stream, the end of a stream that carried no beat.
#include <ap_axi_sdata.h>
#include <ap_int.h>
#include <hls_stream.h>

#ifndef TIE_OFF_WIDTH
#define TIE_OFF_WIDTH 512
#endif

typedef ap_axiu<TIE_OFF_WIDTH, 0, 0, 0> tie_off_beat;

extern "C" void tie_off_source(hls::stream<tie_off_beat>& out) {
#pragma HLS INTERFACE axis port = out
#pragma HLS INTERFACE ap_ctrl_none port = return
    (void)out;
}
