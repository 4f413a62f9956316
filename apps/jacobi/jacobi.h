// The jacobi kernel's cell layout and limits: the kernel (jacobi.cpp) compiles against them and
// the host program parses them (host/src/layout.rs), so they have this one source.
#ifndef JACOBI_H
#define JACOBI_H

// One cell: an unsigned integer of this many bits, little-endian in memory.
#define JACOBI_CELL_BITS 32
// The width of a memory word and of a halo beat (the m_axi port and the AXI4-Streams).
#define JACOBI_WORD_BITS 512
// Widest slab the on-chip row buffers hold, in cells. A row must also fit what one link
// direction buffers (the host checks it against the AuroraFlow FIFOs; see jacobi.cpp).
#define JACOBI_MAX_COLS 8192

#define JACOBI_CELLS_PER_WORD (JACOBI_WORD_BITS / JACOBI_CELL_BITS)
#define JACOBI_MAX_WORDS (JACOBI_MAX_COLS / JACOBI_CELLS_PER_WORD)

#endif
