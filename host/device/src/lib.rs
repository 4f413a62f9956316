//! FPGA devices as the host driver sees them: load an xclbin, list CUs, buffers in memory
//! banks, register access on a CU's AXI4-Lite map, kernel runs. Two backends: `xrt` (real
//! cards through XRT's C API) and `sim` (the simulated devices of the build graph).

use std::path::Path;
use std::time::Duration;

use anyhow::Result;

pub mod sim;
pub mod xrt;

/// A compute unit of the loaded xclbin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CuInfo {
    pub name: String,
    pub kernel: String,
    /// "rtl", "hls" or "finn".
    pub kind: String,
    pub base_address: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferId(pub u64);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RunId(pub u64);

/// One kernel argument, in the kernel's argument order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelArg {
    Scalar(u64),
    Buffer(BufferId),
    /// A stream argument: connected by the link configuration, nothing to pass at run time.
    Stream,
}

pub trait Device: Send {
    /// Which device this is (BDF, index or simulated device name), for messages.
    fn name(&self) -> String;
    /// Loads the xclbin and returns its UUID.
    fn load_xclbin(&mut self, path: &Path) -> Result<[u8; 16]>;
    fn compute_units(&self) -> Result<Vec<CuInfo>>;
    /// A buffer of `size` bytes in memory bank `bank` (e.g. "HBM[0]").
    fn alloc(&mut self, bank: &str, size: usize) -> Result<BufferId>;
    fn write_buffer(&mut self, buffer: BufferId, offset: usize, data: &[u8]) -> Result<()>;
    fn read_buffer(&mut self, buffer: BufferId, offset: usize, out: &mut [u8]) -> Result<()>;
    fn read_register(&self, cu: &str, offset: u32) -> Result<u32>;
    fn write_register(&self, cu: &str, offset: u32, value: u32) -> Result<()>;
    fn start(&mut self, cu: &str, args: &[KernelArg]) -> Result<RunId>;
    fn wait(&mut self, run: RunId, timeout: Duration) -> Result<()>;
}

/// A CU's registers as the `aurora` host API wants them.
pub struct CuRegisters<'a, D: Device + ?Sized> {
    pub device: &'a D,
    pub cu: String,
}

impl<D: Device + ?Sized> aurora::Registers for CuRegisters<'_, D> {
    fn read32(&self, offset: u32) -> Result<u32> {
        self.device.read_register(&self.cu, offset)
    }
    fn write32(&self, offset: u32, value: u32) -> Result<()> {
        self.device.write_register(&self.cu, offset, value)
    }
}
