//! `auroraforge_host`: the host API of an AuroraForge deployment. A host program runs once
//! per FPGA as one MPI rank; `Session::init` does the rank setup every host of the project
//! shares (this rank's card opened on the simulated devices or through XRT, its xclbin
//! loaded and checked against topology.json, the simulated Aurora links joined over MPI,
//! the program re-started under mpirun when run outside MPI), and the session's calls drive
//! the card: buffers in the banks the link configuration gives each kernel argument, kernel
//! runs with arguments by name, the AuroraFlow counters, MPI. README.md has every call and
//! an example; `aurora-host` (host/driver) is built on the same modules.

pub mod args;
pub mod gather;
pub mod idle;
pub mod launch;
pub mod link_config;
pub mod link_model;
pub mod options;
pub mod progress;
pub mod rank_lines;
pub mod record;
mod session;
pub mod setup;
pub mod topology;
pub mod transport;

pub use aurora::Counters;
pub use fpga_device::CuInfo;
pub use session::{main, main_with_status, Arg, Buffer, Run, Session};
