//! The initial grid every run starts from: a plate whose left edge is held hot and right
//! edge cold (the fixed boundary columns), with a hot spot inside, and a texture in the low
//! bits so that the rounding of every update shows in the result. Each rank computes its own
//! slab from the same function; the reference computes the whole grid.

/// The hot edge's and the hot spot's value.
pub const HOT: u32 = 1 << 24;

/// The cell at row `r`, column `c` of a `rows` x `cols` grid.
pub fn cell(r: usize, c: usize, rows: usize, cols: usize) -> u32 {
    if c == 0 {
        return HOT;
    }
    if c + 1 == cols {
        return 0;
    }
    // a disc around a third of the way down, in the middle
    let (dr, dc) = (r.abs_diff(rows / 3), c.abs_diff(cols / 2));
    let radius = rows.max(cols) / 8 + 1;
    if dr * dr + dc * dc <= radius * radius {
        return HOT;
    }
    ((r * 7919 + c * 104_729) % 1021) as u32
}

/// The whole grid, row-major.
pub fn whole(rows: usize, cols: usize) -> Vec<u32> {
    (0..rows)
        .flat_map(|r| (0..cols).map(move |c| cell(r, c, rows, cols)))
        .collect()
}

/// Card `card`'s slab of the grid `cards` slabs of `rows` rows make, row-major.
pub fn slab(card: usize, cards: usize, rows: usize, cols: usize) -> Vec<u32> {
    let total = rows * cards;
    (card * rows..(card + 1) * rows)
        .flat_map(|r| (0..cols).map(move |c| cell(r, c, total, cols)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slabs_stack_into_the_whole_grid() {
        let (rows, cols, cards) = (3, 32, 4);
        let stacked: Vec<u32> = (0..cards)
            .flat_map(|k| slab(k, cards, rows, cols))
            .collect();
        assert_eq!(stacked, whole(rows * cards, cols));
    }

    #[test]
    fn edges_and_spot() {
        let g = whole(12, 32);
        assert!((0..12).all(|r| g[r * 32] == HOT && g[r * 32 + 31] == 0));
        assert_eq!(g[4 * 32 + 16], HOT);
    }
}
