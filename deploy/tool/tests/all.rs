//! The crate's integration tests as one test executable (Cargo.toml: `autotests = false`):
//! each file here is a module of it, so the deploy-tool library and its dependencies are
//! linked into one test binary instead of one per file, and the tests of all files run
//! side by side on libtest's threads.

mod common;

mod aurora_reference;
mod bad_input;
mod board_file;
mod finn_pipeline;
mod format_doc;
mod hls_app;
mod hls_bad;
mod hostile;
mod job_scripts;
mod min_util;
mod one_card;
mod plan_slice;
mod replicas;
mod report;
mod site_cluster;
mod slr_lines;
mod vpp_link;
