//! The crate's integration tests as one test executable (Cargo.toml: `autotests = false`):
//! each file here is a module of it, so the helper and its dependencies are linked
//! into one test binary instead of one per file.

mod common;

mod cargo_action;
mod helpers;
mod shared_runtime;
