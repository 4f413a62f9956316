// Link benchmark sink (the `recv` kernel of AuroraFlow's test application, same ports):
// `iterations` times, receives byte_size / DATA_WIDTH_BYTES beats from `data_input` into
// memory (every iteration overwrites the same buffer, so the host can compare it with what
// send read), then writes one acknowledge: ack_mode 0 to `loopback_ack_stream` (send on the
// same card), 1 to `pair_ack_stream` (send on the peer card), any other value none.
#include "link_bench.h"

extern "C" void recv(hls::stream<link_beat>& data_input, ap_uint<DATA_WIDTH>* data_output,
                     unsigned int byte_size, unsigned int iterations, unsigned int ack_mode,
                     hls::stream<link_ack>& loopback_ack_stream,
                     hls::stream<link_ack>& pair_ack_stream) {
#pragma HLS INTERFACE axis port = data_input
#pragma HLS INTERFACE m_axi port = data_output offset = slave bundle = gmem
#pragma HLS INTERFACE axis port = loopback_ack_stream
#pragma HLS INTERFACE axis port = pair_ack_stream
#pragma HLS INTERFACE s_axilite port = data_output bundle = control
#pragma HLS INTERFACE s_axilite port = byte_size bundle = control
#pragma HLS INTERFACE s_axilite port = iterations bundle = control
#pragma HLS INTERFACE s_axilite port = ack_mode bundle = control
#pragma HLS INTERFACE s_axilite port = return bundle = control
    const unsigned int chunks = byte_size / DATA_WIDTH_BYTES;
recv_iterations:
    for (unsigned int n = 0; n < iterations; n++) {
    recv_chunks:
        for (unsigned int i = 0; i < chunks; i++) {
#pragma HLS PIPELINE II = 1
            data_output[i] = data_input.read().data;
        }
        link_ack ack;
        ack.data = 1;
        ack.keep = 1;
        ack.strb = 1;
        ack.last = 1;
        if (ack_mode == 0) {
            loopback_ack_stream.write(ack);
        } else if (ack_mode == 1) {
            pair_ack_stream.write(ack);
        }
    }
}
