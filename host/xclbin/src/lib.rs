//! The axlf ("xclbin2") container of XRT, written and read with the layout of XRT's public
//! `xclbin.h` (libxrt-dev 2.13), and the simulated-device description packed inside it.

pub mod archive;
pub mod axlf;
pub mod metadata_xml;
pub mod pack;
pub mod read;
pub mod sections;

pub use axlf::{SectionKind, Xclbin, XclbinSection};
pub use description::{DeviceDescription, KernelEntry};
/// The description's one type lives in `device_desc` (written by the deploy tool).
pub use device_desc::device as description;
pub use read::read_xclbin;
