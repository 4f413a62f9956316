//! The two JSON contracts between the floors, each one serde type shared by its writer and
//! every reader: `kernel.json` (written by the kernel rules, read by the deploy tool) and the
//! simulated-device description `<dev>.sim.json` (written by the deploy tool, read by the
//! xclbin packer, the simulated device and the host programs). A port of a kernel.json is
//! carried into the description as is, so both share [`Port`].

pub mod device;
pub mod kernel;

pub use device::{DeviceDescription, KernelEntry, LinkEntry, MemoryEntry, StreamEntry};
pub use kernel::{padded, Kernel, Port};
