//! FPGA devices as the host driver sees them: load an xclbin, list CUs, buffers in memory
//! banks, register access on a CU's AXI4-Lite map, kernel runs. Two backends: `xrt` (real
//! cards through XRT's C API) and `sim` (the simulated devices of the build graph). The
//! host driver's commands run on `dyn Device` only, so the simulation runs the code the
//! cards run down to the buffer and kernel calls; `record` logs those calls.

use std::path::Path;
use std::time::Duration;

use anyhow::Result;
use xclbin::DeviceDescription;

pub mod record;
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
    /// The loaded xclbin's device description (its CUs with their ports and control
    /// protocol, the streams, memory banks and links of the link configuration).
    fn description(&self) -> Result<&DeviceDescription>;
    fn compute_units(&self) -> Result<Vec<CuInfo>>;
    /// A buffer of `size` bytes in memory bank `bank` (e.g. "HBM[0]").
    fn alloc(&mut self, bank: &str, size: usize) -> Result<BufferId>;
    fn write_buffer(&mut self, buffer: BufferId, offset: usize, data: &[u8]) -> Result<()>;
    fn read_buffer(&mut self, buffer: BufferId, offset: usize, out: &mut [u8]) -> Result<()>;
    fn read_register(&self, cu: &str, offset: u32) -> Result<u32>;
    fn write_register(&self, cu: &str, offset: u32, value: u32) -> Result<()>;
    /// Starts an `ap_ctrl_hs` CU. `args` are the kernel's arguments by name, in its
    /// argument order; the simulation binds them by name, XRT by the index the xclbin's
    /// kernel metadata gives each name (checking kind and size).
    fn start(&mut self, cu: &str, args: &[(String, KernelArg)]) -> Result<RunId>;
    /// A free-running (`ap_ctrl_none`) CU takes part in the run from now on. On a card it
    /// runs since the xclbin was loaded and nothing is called; the simulation starts it.
    fn begin_free_running(&mut self, cu: &str) -> Result<()>;
    /// An error of a free-running CU so far (the simulation's; a card's CUs report none).
    fn check_free_running(&mut self) -> Result<()>;
    /// After the run: the free-running CUs' part has ended (their streams closed).
    fn end_free_running(&mut self, timeout: Duration) -> Result<()>;
    /// Whether `run` has completed; an error if it failed.
    fn is_done(&mut self, run: RunId) -> Result<bool>;
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
