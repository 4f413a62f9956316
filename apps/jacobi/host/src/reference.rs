//! The reference: the same heat diffusion computed on the whole grid by one process, as
//! plain nested loops over all rows (no slabs, no halos), written apart from the kernel.
//! Rows wrap around (the ring of cards makes the grid a cylinder); the first and last
//! columns keep their values; every other cell becomes (n + s + e + w + 2) / 4, rounded
//! down, computed without overflow.

/// `iterations` steps of the `rows` x `cols` grid `grid` (row-major).
pub fn run(grid: &[u32], rows: usize, cols: usize, iterations: u32) -> Vec<u32> {
    assert_eq!(grid.len(), rows * cols, "grid is not rows x cols");
    let mut old = grid.to_vec();
    let mut new = grid.to_vec();
    for _ in 0..iterations {
        for r in 0..rows {
            let up = (r + rows - 1) % rows;
            let down = (r + 1) % rows;
            for c in 0..cols {
                new[r * cols + c] = if c == 0 || c == cols - 1 {
                    old[r * cols + c]
                } else {
                    let sum = old[up * cols + c] as u64
                        + old[down * cols + c] as u64
                        + old[r * cols + c - 1] as u64
                        + old[r * cols + c + 1] as u64;
                    ((sum + 2) / 4) as u32
                };
            }
        }
        std::mem::swap(&mut old, &mut new);
    }
    old
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_step_worked_by_hand() {
        // 3 x 4: the interior columns 1 and 2; row 0's north is row 2 and row 2's south is
        // row 0. E.g. (0,1): n 4 (row 2), s 0, w 0, e 4: (8 + 2) / 4 = 2;
        // (1,1): n 8, s 4, w 0, e 0: 14 / 4 = 3; (2,2): n 0, s 4 (row 0), w 4, e 0: 2.
        #[rustfmt::skip]
        let g = [
            0, 8, 4, 0,
            0, 0, 0, 0,
            0, 4, 0, 0,
        ];
        #[rustfmt::skip]
        let want = [
            0, 2, 2, 0,
            0, 3, 1, 0,
            0, 2, 2, 0,
        ];
        assert_eq!(run(&g, 3, 4, 1), want);
        assert_eq!(run(&g, 3, 4, 0), g);
    }

    #[test]
    fn saturated_cells_do_not_wrap() {
        let g = vec![u32::MAX; 4 * 5];
        assert_eq!(run(&g, 4, 5, 3), g);
    }
}
