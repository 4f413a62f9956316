//! The crate's integration tests as one test executable (Cargo.toml: `autotests = false`):
//! each file here is a module of it, so `aurora-host`'s library and its dependencies are linked
//! into one test binary instead of one per file.

mod common;

mod bad_input;
mod bench_calls;
mod failing_rank;
mod infer_refusals;
mod rank_killed;
mod status_bench;
mod xrt_no_card;
