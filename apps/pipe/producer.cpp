// The example pipeline's source: `count` 64-bit words from memory to a 64-bit AXI4-Stream,
// TLAST on the last. Its stream is narrower than the 512-bit link on purpose: between cards
// the deployment puts a width converter (8 words per link beat) before the link kernel.
#include <ap_axi_sdata.h>
#include <ap_int.h>
#include <hls_stream.h>
#include <stdint.h>

typedef ap_axiu<64, 0, 0, 0> producer_beat;

extern "C" void producer(const ap_uint<64>* src, hls::stream<producer_beat>& out, uint64_t count) {
#pragma HLS INTERFACE m_axi port = src offset = slave bundle = gmem
#pragma HLS INTERFACE axis port = out
#pragma HLS INTERFACE s_axilite port = src bundle = control
#pragma HLS INTERFACE s_axilite port = count bundle = control
#pragma HLS INTERFACE s_axilite port = return bundle = control
producer_words:
    for (uint64_t i = 0; i < count; i++) {
#pragma HLS PIPELINE II = 1
        producer_beat beat;
        beat.data = src[i];
        beat.keep = -1;
        beat.strb = -1;
        beat.last = (i + 1 == count);
        out.write(beat);
    }
}
