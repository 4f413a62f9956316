//! What the integration tests share: the fixtures under tests/data.

use std::path::PathBuf;

use finn_partitioner::estimates::Estimates;

/// The fixtures directory: found from the working directory (test runners start tests
/// in the crate directory, as cargo does) or the runtime/compile-time manifest dir.
#[allow(dead_code)]
pub fn data_dir() -> PathBuf {
    let candidates = [
        std::env::var_os("CARGO_MANIFEST_DIR").map(|d| PathBuf::from(d).join("tests/data")),
        Some(PathBuf::from("tests/data")),
        Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find(|p| p.is_dir())
        .unwrap_or_else(|| PathBuf::from("tests/data"))
}

/// A FINN estimate report of tests/data.
#[allow(dead_code)]
pub fn estimates(name: &str) -> Estimates {
    Estimates::load(&data_dir().join(name)).unwrap()
}

/// The Alveo U280's platform, as a devices JSON names it.
#[allow(dead_code)]
pub const U280: &str = "xilinx_u280_gen3x16_xdma_1_202211_1";

/// The boards' files (toolchains/fpga_platforms/ of the project), the partitioner's only
/// source of a card's totals and ports.
#[allow(dead_code)]
pub fn boards() -> finn_partitioner::devices::Boards {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../toolchains/fpga_platforms");
    finn_partitioner::devices::Boards::dir(&dir).unwrap()
}

/// `n` U280s from the board's file, FINN+'s default budgets.
#[allow(dead_code)]
pub fn u280s(n: usize, clk_mhz: f64) -> Vec<finn_partitioner::devices::Device> {
    finn_partitioner::devices::cards(&boards().known[U280], n, clk_mhz)
}
