// Output DMA: an AXI4-Stream of DMA_STREAM_WIDTH bits (default 512) to `size` bytes of
// HBM/DDR (512-bit memory words, m_axi bundle gmem). Reads exactly ceil(size / beat bytes)
// beats; the bytes of the final memory word beyond `size` keep their old content.
#include "dma_common.h"

// Stores `word` at `index`, keeping the bytes at or beyond `size` as they were.
static void dma_store(dma_mem_word* mem, uint64_t index, dma_mem_word word, uint64_t size) {
    const uint64_t base = index * DMA_MEM_BYTES;
    if (base + DMA_MEM_BYTES <= size) {
        mem[index] = word;
        return;
    }
    dma_mem_word merged = mem[index];
    const unsigned valid = unsigned(size - base);
    merged.range(8 * valid - 1, 0) = word.range(8 * valid - 1, 0);
    mem[index] = merged;
}

extern "C" void dma_out(hls::stream<dma_beat>& in, dma_mem_word* mem, uint64_t size) {
#pragma HLS INTERFACE axis port = in
#pragma HLS INTERFACE m_axi port = mem offset = slave bundle = gmem max_write_burst_length = 64
#pragma HLS INTERFACE s_axilite port = mem bundle = control
#pragma HLS INTERFACE s_axilite port = size bundle = control
#pragma HLS INTERFACE s_axilite port = return bundle = control
    const uint64_t beats = (size + DMA_BEAT_BYTES - 1) / DMA_BEAT_BYTES;
    dma_mem_word word = 0;
dma_out_beats:
    for (uint64_t b = 0; b < beats; b++) {
#pragma HLS PIPELINE II = 1
        const dma_beat beat = in.read();
        if (DMA_STREAM_WIDTH <= DMA_MEM_WIDTH) {
            // several beats per memory word: store the word when its last lane arrived
            const unsigned lanes = DMA_MEM_WIDTH / DMA_STREAM_WIDTH;
            const unsigned lane = b % lanes;
            word.range(DMA_STREAM_WIDTH * (lane + 1) - 1, DMA_STREAM_WIDTH * lane) = beat.data;
            if (lane + 1 == lanes || b + 1 == beats) dma_store(mem, b / lanes, word, size);
        } else {
            const unsigned words = DMA_STREAM_WIDTH / DMA_MEM_WIDTH;
            for (unsigned w = 0; w < words; w++) {
#pragma HLS UNROLL
                const uint64_t index = b * words + w;
                if (index * DMA_MEM_BYTES < size)
                    dma_store(mem, index, beat.data.range(DMA_MEM_WIDTH * (w + 1) - 1, DMA_MEM_WIDTH * w), size);
            }
        }
    }
}
