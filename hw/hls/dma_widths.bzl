# The stream widths the DMA kernels are built for, stated once (hw/hls/BUCK builds them,
# deploy/BUCK offers them to every FINN deployment). finn-plus 1.6.1's InsertIODMA gives a
# network input or output DMA gcd(frame bits, 512) bits, a power of two from 8 to 512; 512 is
# `:dma_in` / `:dma_out` themselves, the others are `:dma_in_w<W>` / `:dma_out_w<W>`.
DMA_STREAM_WIDTHS = [8, 16, 32, 64, 128, 256]

def dma_variants():
    """The labels of every DMA width variant, input and output."""
    return [
        "//hw/hls:{}_w{}".format(top, width)
        for width in DMA_STREAM_WIDTHS
        for top in ("dma_in", "dma_out")
    ]
