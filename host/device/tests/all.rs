//! The crate's integration tests as one test executable (Cargo.toml: `autotests = false`):
//! each file here is a module of it, so the device library and its dependencies are linked
//! into one test binary instead of one per file.
//! (xrt_no_device_with_runtime.rs stays an executable of its own: it sets the
//! process's environment.)

mod finn_plugin;
mod flow_control;
mod sim_banks;
mod sim_device;
mod xrt_metadata;
mod xrt_no_device;
