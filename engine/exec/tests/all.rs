//! The crate's integration tests as one test executable (Cargo.toml: `autotests = false`):
//! each file here is a module of it, so the executor and its dependencies are linked
//! into one test binary instead of one per file.

mod common;

mod exec;
mod hermetic;
mod processes;
mod remote;
mod sandbox_reuse;
mod skipped;
mod test_pipelining;
mod worker_sandbox;
