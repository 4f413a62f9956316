// 2-D Jacobi heat diffusion, one card's slab of a grid shared by a ring of cards
// (apps/jacobi/README.md).
//
// The grid has the slabs of all cards stacked in ring order and is periodic in the row
// direction (a cylinder: the row above card 0's first row is the last card's last row); its
// first and last columns are a fixed (Dirichlet) boundary. Each iteration, every other cell
// becomes the rounded mean of its four neighbours,
//     new = (north + south + east + west + 2) >> 2,
// in integers, so every card and the host's reference agree bit for bit.
//
// `grid` holds the slab, `rows` x `cols` cells of JACOBI_CELL_BITS, row-major, in 512-bit
// words (cell j of a word in bits 32j+31..32j); it is updated in place. Per iteration:
//   1. send the slab's first row on north_out and its last row on south_out (one beat of
//      each in turn, TLAST on a row's last beat);
//   2. receive the north neighbour's last row on north_in and the south neighbour's first
//      row on south_in;
//   3. sweep the rows top to bottom, keeping the old values of the row above, the current
//      row and the row below in three line buffers, and write each new row over the old.
// Arguments the kernel cannot take (rows = 0, cols not a positive multiple of
// JACOBI_CELLS_PER_WORD, cols > JACOBI_MAX_COLS) return at once, untouched; the host checks
// them first, since the neighbours would wait for this card's rows.
//
// Why the exchange cannot deadlock: every kernel sends both rows before it reads, so it
// never waits for a reader while its own inputs wait for it, provided each stream takes one
// whole row without a reader (a row is at most JACOBI_MAX_COLS cells, and the host refuses
// a row longer than a link direction buffers before flow control stops its sender: the
// AuroraFlow TX FIFO plus the receiver's RX FIFO up to XOFF). After its sends a kernel only
// reads, and every row it waits for was sent at the start of its neighbour's same
// iteration, which needed nothing from this kernel's later iterations. A kernel runs at
// most one iteration ahead of a neighbour, so a stream holds at most two rows: with a slow
// reader the receiver's RX FIFO fills and flow control (XOFF/XON) paces the sender.
#include <ap_axi_sdata.h>
#include <ap_int.h>
#include <hls_stream.h>

#include "jacobi.h"

typedef ap_uint<JACOBI_WORD_BITS> jacobi_word;
typedef ap_axiu<JACOBI_WORD_BITS, 0, 0, 0> halo_beat;
typedef ap_uint<JACOBI_CELL_BITS> jacobi_cell;
// Four cells and the rounding term: two more bits than a cell.
typedef ap_uint<JACOBI_CELL_BITS + 2> jacobi_sum;

static jacobi_cell cell_of(const jacobi_word& w, unsigned j) {
    return w.range(JACOBI_CELL_BITS * (j + 1) - 1, JACOBI_CELL_BITS * j);
}

// The new values of word `w` of a row from the old values of the rows above and below and
// of the row itself (`cur`, whole, for the east and west neighbours across word edges).
static jacobi_word update_word(const jacobi_word& above, const jacobi_word& below,
                               const jacobi_word* cur, unsigned w, unsigned words, unsigned cols) {
#pragma HLS INLINE
    const jacobi_word mid = cur[w];
    // Across a word edge: the last cell of the word before, the first of the word after
    // (at the grid's edges the boundary cell keeps its value, so these are not used).
    const jacobi_cell left_edge = cell_of(cur[w > 0 ? w - 1 : 0], JACOBI_CELLS_PER_WORD - 1);
    const jacobi_cell right_edge = cell_of(cur[w + 1 < words ? w + 1 : w], 0);
    jacobi_word out = mid;
update_cells:
    for (unsigned j = 0; j < JACOBI_CELLS_PER_WORD; j++) {
#pragma HLS UNROLL
        const unsigned col = w * JACOBI_CELLS_PER_WORD + j;
        if (col == 0 || col + 1 == cols) continue;  // the fixed boundary columns
        const jacobi_sum west = j > 0 ? cell_of(mid, j - 1) : left_edge;
        const jacobi_sum east = j + 1 < JACOBI_CELLS_PER_WORD ? cell_of(mid, j + 1) : right_edge;
        const jacobi_sum north = cell_of(above, j);
        const jacobi_sum south = cell_of(below, j);
        const jacobi_sum sum = north + south + east + west + jacobi_sum(2);
        out.range(JACOBI_CELL_BITS * (j + 1) - 1, JACOBI_CELL_BITS * j) = jacobi_cell(sum >> 2);
    }
    return out;
}

extern "C" void jacobi(jacobi_word* grid, unsigned int rows, unsigned int cols,
                       unsigned int iterations, hls::stream<halo_beat>& north_out,
                       hls::stream<halo_beat>& north_in, hls::stream<halo_beat>& south_out,
                       hls::stream<halo_beat>& south_in) {
#pragma HLS INTERFACE m_axi port = grid offset = slave bundle = gmem
#pragma HLS INTERFACE axis port = north_out
#pragma HLS INTERFACE axis port = north_in
#pragma HLS INTERFACE axis port = south_out
#pragma HLS INTERFACE axis port = south_in
#pragma HLS INTERFACE s_axilite port = grid bundle = control
#pragma HLS INTERFACE s_axilite port = rows bundle = control
#pragma HLS INTERFACE s_axilite port = cols bundle = control
#pragma HLS INTERFACE s_axilite port = iterations bundle = control
#pragma HLS INTERFACE s_axilite port = return bundle = control
    if (rows == 0 || cols == 0 || cols % JACOBI_CELLS_PER_WORD != 0 || cols > JACOBI_MAX_COLS) return;
    const unsigned words = cols / JACOBI_CELLS_PER_WORD;
    const unsigned last_row = (rows - 1) * words;

    // Old values: lines[above], lines[cur], lines[below] rotate as the sweep moves down.
    jacobi_word lines[3][JACOBI_MAX_WORDS];
    jacobi_word south_halo[JACOBI_MAX_WORDS];
#pragma HLS BIND_STORAGE variable = lines type = ram_2p impl = uram
#pragma HLS BIND_STORAGE variable = south_halo type = ram_2p impl = bram

iterations_loop:
    for (unsigned it = 0; it < iterations; it++) {
        unsigned above = 0, cur = 1, below = 2;
    send_rows:
        for (unsigned w = 0; w < words; w++) {
#pragma HLS PIPELINE II = 2
            const jacobi_word first = grid[w];
            lines[cur][w] = first;  // the sweep starts on row 0
            halo_beat n, s;
            n.data = first;
            s.data = grid[last_row + w];
            n.keep = s.keep = -1;
            n.strb = s.strb = -1;
            n.last = s.last = (w + 1 == words);
            north_out.write(n);
            south_out.write(s);
        }
    receive_halos:
        for (unsigned w = 0; w < words; w++) {
#pragma HLS PIPELINE II = 1
            lines[above][w] = north_in.read().data;  // the row above row 0
            south_halo[w] = south_in.read().data;    // the row below the last row
        }
    sweep_rows:
        for (unsigned r = 0; r < rows; r++) {
            const unsigned base = r * words;
        sweep_words:
            for (unsigned w = 0; w < words; w++) {
#pragma HLS PIPELINE II = 1
                // the old row below: still in memory (written after this one), or the halo
                const jacobi_word b = r + 1 < rows ? grid[base + words + w] : south_halo[w];
                lines[below][w] = b;
                grid[base + w] = update_word(lines[above][w], b, lines[cur], w, words, cols);
            }
            const unsigned old_above = above;
            above = cur;
            cur = below;
            below = old_above;
        }
    }
}
