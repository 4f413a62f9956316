//! The AuroraFlow kernel description, `hw/aurora_flow/kernel.toml`, and the copies of its
//! facts that other files need: the rule's limits (`rules/aurora_flow_desc.bzl`), the RTL
//! package (`rtl/af_kernel_pkg.sv`), the control port's declarations
//! (`rtl/af_axil_ports.svh`) and the README tables. `tests/drift.rs` fails when any
//! copy, generated or hand-written, disagrees with the description. `xdc` and `cdc` read the
//! packaging's XDC and check that every clock-domain crossing of the RTL is bounded by a
//! constraint in force (`tests/xdc_precedence.rs`).

pub mod cdc;
mod description;
mod render;
pub mod xdc;

pub use description::{load, AxiliteSignal, FlowControl, Kernel, KernelDesc, Parameter, Register};
pub use render::{bzl, readme_parameters, readme_registers, sv_axil_ports, sv_package};
