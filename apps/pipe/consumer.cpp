// The example pipeline's sink: `count` 512-bit beats of an AXI4-Stream into memory.
#include <ap_axi_sdata.h>
#include <ap_int.h>
#include <hls_stream.h>
#include <stdint.h>

typedef ap_axiu<512, 0, 0, 0> consumer_beat;

extern "C" void consumer(hls::stream<consumer_beat>& in, ap_uint<512>* dst, uint64_t count) {
#pragma HLS INTERFACE axis port = in
#pragma HLS INTERFACE m_axi port = dst offset = slave bundle = gmem
#pragma HLS INTERFACE s_axilite port = dst bundle = control
#pragma HLS INTERFACE s_axilite port = count bundle = control
#pragma HLS INTERFACE s_axilite port = return bundle = control
consumer_words:
    for (uint64_t i = 0; i < count; i++) {
#pragma HLS PIPELINE II = 1
        dst[i] = in.read().data;
    }
}
