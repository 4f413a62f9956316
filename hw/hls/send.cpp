// Link benchmark source (the `send` kernel of AuroraFlow's test application, same ports):
// `iterations` times, streams `byte_size` bytes from memory to `data_output` with TLAST
// after every `frame_size` beats and on the last beat of the iteration (frame_size 0: no
// TLAST), TKEEP all ones; then waits for one acknowledge: ack_mode 0 from
// `loopback_ack_stream` (recv on the same card), 1 from `pair_ack_stream` (recv on the peer
// card), any other value none (throughput: source only). Latency = small byte_size with
// acks; throughput = large byte_size, ack_mode 2 or one ack per iteration.
#include "link_bench.h"

extern "C" void send(hls::stream<link_beat>& data_output, ap_uint<DATA_WIDTH>* data_input,
                     unsigned int byte_size, unsigned int frame_size, unsigned int iterations,
                     unsigned int ack_mode, hls::stream<link_ack>& loopback_ack_stream,
                     hls::stream<link_ack>& pair_ack_stream) {
#pragma HLS INTERFACE axis port = data_output
#pragma HLS INTERFACE m_axi port = data_input offset = slave bundle = gmem
#pragma HLS INTERFACE axis port = loopback_ack_stream
#pragma HLS INTERFACE axis port = pair_ack_stream
#pragma HLS INTERFACE s_axilite port = data_input bundle = control
#pragma HLS INTERFACE s_axilite port = byte_size bundle = control
#pragma HLS INTERFACE s_axilite port = frame_size bundle = control
#pragma HLS INTERFACE s_axilite port = iterations bundle = control
#pragma HLS INTERFACE s_axilite port = ack_mode bundle = control
#pragma HLS INTERFACE s_axilite port = return bundle = control
    const unsigned int chunks = byte_size / DATA_WIDTH_BYTES;
send_iterations:
    for (unsigned int n = 0; n < iterations; n++) {
    send_chunks:
        for (unsigned int i = 0; i < chunks; i++) {
#pragma HLS PIPELINE II = 1
            link_beat beat;
            beat.data = data_input[i];
            beat.keep = -1;
            beat.strb = -1;
            beat.last = frame_size != 0 && (((i + 1) % frame_size) == 0 || i + 1 == chunks);
            data_output.write(beat);
        }
        if (ack_mode == 0) {
            loopback_ack_stream.read();
        } else if (ack_mode == 1) {
            pair_ack_stream.read();
        }
    }
}
