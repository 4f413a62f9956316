//! forge: an embedded engine that evaluates Buck2 build files with buck2's semantics and
//! executes their action graph hermetically, with local and remote caching.

pub mod analysis;
pub mod cli;
pub mod docs;
pub mod interpreter;
pub mod model;

pub use forge_exec as exec;
