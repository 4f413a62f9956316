//! The crate's integration tests as one test executable (Cargo.toml: `autotests = false`):
//! each file here is a module of it, so the engine and its dependencies are linked
//! into one test binary instead of one per file.

mod cli_limits;
mod clone_locations;
mod conformance;
mod output_modes;
mod remote_cache;
mod test_tmpdir;
