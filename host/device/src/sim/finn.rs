//! The seam for FINN partitions: another crate (finn_exec) implements the functional
//! executor; the simulated device only moves frames between streams.

use std::path::Path;

use anyhow::Result;
use xclbin::KernelEntry;

/// One FINN partition executing frame by frame. `input` is one frame of the partition's
/// input stream, packed as the stream carries it (little-endian beats, the width of the
/// input port); the output is one frame of its output stream.
pub trait FinnPartition: Send {
    /// Bytes of one input frame on the input stream.
    fn input_frame_bytes(&self) -> usize;
    /// Bytes of one output frame on the output stream.
    fn output_frame_bytes(&self) -> usize;
    fn run(&mut self, input: &[u8]) -> Result<Vec<u8>>;
}

/// Builds the executor of a FINN CU from its description entry and the unpacked payload
/// directory (the partition's model files).
pub trait FinnFactory: Send + Sync {
    fn open(&self, kernel: &KernelEntry, payload_dir: &Path) -> Result<Box<dyn FinnPartition>>;
}
