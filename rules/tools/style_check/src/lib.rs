//! The test command of rules/style.bzl: runs one style tool over a package's files and turns
//! its exit status into a verdict that names the target and what to do.
//!
//! - [`args`]: the command line the rules write.
//! - [`verdict`]: what the tool's exit status and output mean for the test.
//! - [`record`]: a run kept by a build action for the test to judge (clippy).

pub mod args;
pub mod record;
pub mod verdict;
