// Input DMA: `size` bytes from HBM/DDR (512-bit memory words, m_axi bundle gmem) to an
// AXI4-Stream of DMA_STREAM_WIDTH bits (default 512; a divisor or a multiple of 512). One
// packet per run: TLAST on the final beat, TKEEP marks the valid bytes of a partial final beat.
// The buffer is read in whole 64-byte words (XRT buffers are page-aligned and page-sized).
#include "dma_common.h"

extern "C" void dma_in(const dma_mem_word* mem, hls::stream<dma_beat>& out, uint64_t size) {
#pragma HLS INTERFACE m_axi port = mem offset = slave bundle = gmem max_read_burst_length = 64
#pragma HLS INTERFACE axis port = out
#pragma HLS INTERFACE s_axilite port = mem bundle = control
#pragma HLS INTERFACE s_axilite port = size bundle = control
#pragma HLS INTERFACE s_axilite port = return bundle = control
    const uint64_t beats = (size + DMA_BEAT_BYTES - 1) / DMA_BEAT_BYTES;
    dma_mem_word word = 0;
dma_in_beats:
    for (uint64_t b = 0; b < beats; b++) {
#pragma HLS PIPELINE II = 1
        dma_beat beat;
        if (DMA_STREAM_WIDTH <= DMA_MEM_WIDTH) {
            // several beats per memory word: read a word when its first lane is due
            const unsigned lanes = DMA_MEM_WIDTH / DMA_STREAM_WIDTH;
            const unsigned lane = b % lanes;
            if (lane == 0) word = mem[b / lanes];
            beat.data = word.range(DMA_STREAM_WIDTH * (lane + 1) - 1, DMA_STREAM_WIDTH * lane);
        } else {
            // several memory words per beat (only those holding valid bytes are read)
            const unsigned words = DMA_STREAM_WIDTH / DMA_MEM_WIDTH;
            beat.data = 0;
            for (unsigned w = 0; w < words; w++) {
#pragma HLS UNROLL
                const uint64_t index = b * words + w;
                if (index * DMA_MEM_BYTES < size)
                    beat.data.range(DMA_MEM_WIDTH * (w + 1) - 1, DMA_MEM_WIDTH * w) = mem[index];
            }
        }
        const uint64_t left = size - b * DMA_BEAT_BYTES;
        const unsigned valid = left < DMA_BEAT_BYTES ? unsigned(left) : unsigned(DMA_BEAT_BYTES);
        beat.keep = 0;
        for (unsigned i = 0; i < DMA_BEAT_BYTES; i++) {
#pragma HLS UNROLL
            beat.keep[i] = i < valid;
        }
        beat.strb = beat.keep;
        beat.last = (b + 1 == beats);
        out.write(beat);
    }
}
