// The link benchmark kernels' shared stream types (send.cpp, recv.cpp, as AuroraFlow's test
// application): data beats of DATA_WIDTH_BYTES (default 64) and one-bit acknowledges.
#ifndef LINK_BENCH_H
#define LINK_BENCH_H

#include <ap_axi_sdata.h>
#include <ap_int.h>
#include <hls_stream.h>

#ifndef DATA_WIDTH_BYTES
#define DATA_WIDTH_BYTES 64
#endif
#define DATA_WIDTH (DATA_WIDTH_BYTES * 8)

typedef ap_axiu<DATA_WIDTH, 0, 0, 0> link_beat;
typedef ap_axiu<1, 0, 0, 0> link_ack;

#endif
