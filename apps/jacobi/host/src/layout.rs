//! The kernel's cell layout and limits, taken from the header the kernel compiles against
//! (apps/jacobi/jacobi.h), and the packing of cells into the kernel's memory words.

use anyhow::{bail, Context, Result};

/// The kernel's header, the one source of its layout.
const HEADER: &str = include_str!("../../jacobi.h");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub cell_bits: u32,
    pub word_bits: u32,
    pub max_cols: u32,
}

/// The integer value of `#define NAME value` in jacobi.h.
fn define(name: &str) -> Result<u32> {
    for line in HEADER.lines() {
        let mut words = line.split_whitespace();
        if words.next() == Some("#define") && words.next() == Some(name) {
            let v = words.next().context("no value")?;
            return v
                .parse()
                .with_context(|| format!("apps/jacobi/jacobi.h: #define {name} {v}"));
        }
    }
    bail!("apps/jacobi/jacobi.h has no #define {name}")
}

impl Layout {
    pub fn of_kernel() -> Result<Layout> {
        let l = Layout {
            cell_bits: define("JACOBI_CELL_BITS")?,
            word_bits: define("JACOBI_WORD_BITS")?,
            max_cols: define("JACOBI_MAX_COLS")?,
        };
        if l.cell_bits != 32 {
            bail!(
                "apps/jacobi/jacobi.h: the host holds cells as u32, the kernel's are {} bits",
                l.cell_bits
            );
        }
        Ok(l)
    }

    pub fn cells_per_word(&self) -> u32 {
        self.word_bits / self.cell_bits
    }

    pub fn row_bytes(&self, cols: u32) -> u64 {
        cols as u64 * self.cell_bits as u64 / 8
    }

    /// The slab sizes the kernel takes (it returns untouched on others), as a user error.
    pub fn check(&self, rows: u32, cols: u32) -> Result<()> {
        let per_word = self.cells_per_word();
        if rows == 0 {
            bail!("--rows 0: every card needs at least one row");
        }
        if cols == 0 || !cols.is_multiple_of(per_word) || cols > self.max_cols {
            bail!(
                "--cols {cols}: the kernel takes a positive multiple of {per_word} cells (one \
                 {}-bit word) up to {} (JACOBI_MAX_COLS of apps/jacobi/jacobi.h)",
                self.word_bits,
                self.max_cols
            );
        }
        Ok(())
    }
}

/// Cells as the kernel's memory holds them: little-endian, row-major.
pub fn to_bytes(cells: &[u32]) -> Vec<u8> {
    cells.iter().flat_map(|c| c.to_le_bytes()).collect()
}

pub fn from_bytes(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_gives_sixteen_cells_per_word() {
        let l = Layout::of_kernel().unwrap();
        // 512-bit words of 32-bit cells, as the kernel's m_axi port and its streams say
        assert_eq!(l.cells_per_word(), 16);
        assert!(l.check(1, 16).is_ok());
        assert!(l.check(0, 16).is_err());
        assert!(l.check(4, 24).is_err());
        assert!(l.check(4, l.max_cols + 16).is_err());
    }

    #[test]
    fn bytes_are_little_endian() {
        assert_eq!(to_bytes(&[0x0403_0201]), vec![1, 2, 3, 4]);
        assert_eq!(from_bytes(&[1, 2, 3, 4, 5, 0, 0, 0]), vec![0x0403_0201, 5]);
    }
}
