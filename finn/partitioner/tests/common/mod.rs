//! What the integration tests share: the fixtures under tests/data.

use std::path::PathBuf;

use finn_partitioner::estimates::Estimates;

/// The fixtures directory: found from the working directory (test runners start tests
/// in the crate directory, as cargo does) or the runtime/compile-time manifest dir.
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
pub fn estimates(name: &str) -> Estimates {
    Estimates::load(&data_dir().join(name)).unwrap()
}
