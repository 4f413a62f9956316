// The two DMA kernels' shared shape (dma_in.cpp, dma_out.cpp): 512-bit memory words on the
// m_axi side, an AXI4-Stream of DMA_STREAM_WIDTH bits (default 512; a divisor or a multiple
// of 512) on the other.
#ifndef DMA_COMMON_H
#define DMA_COMMON_H

#include <ap_axi_sdata.h>
#include <ap_int.h>
#include <hls_stream.h>
#include <stdint.h>

#ifndef DMA_STREAM_WIDTH
#define DMA_STREAM_WIDTH 512
#endif

#define DMA_MEM_WIDTH 512
#define DMA_MEM_BYTES (DMA_MEM_WIDTH / 8)
#define DMA_BEAT_BYTES (DMA_STREAM_WIDTH / 8)

static_assert(DMA_STREAM_WIDTH % 8 == 0 &&
                  (DMA_MEM_WIDTH % DMA_STREAM_WIDTH == 0 || DMA_STREAM_WIDTH % DMA_MEM_WIDTH == 0),
              "DMA_STREAM_WIDTH must be whole bytes and divide or be a multiple of 512");

typedef ap_uint<DMA_MEM_WIDTH> dma_mem_word;
typedef ap_axiu<DMA_STREAM_WIDTH, 0, 0, 0> dma_beat;

#endif
