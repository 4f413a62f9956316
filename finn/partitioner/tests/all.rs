//! The crate's integration tests as one test executable (Cargo.toml: `autotests = false`):
//! each file here is a module of it, so the partitioner and its dependencies are linked
//! into one test binary instead of one per file.

mod common;

mod boards;
mod formulas;
mod lower_bounds;
mod partition;
mod replicas;
mod slr;
mod stream_widths;
