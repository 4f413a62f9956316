//! Generates the register constants, parameter defaults and link physics from
//! hw/aurora_flow/kernel.toml with the one reader of it (aurora_flow_desc), the same that
//! generates the RTL package, the testbenches' offsets and the README tables.
//!
//! Generated at build time rather than checked in: a checked-in copy is a second source that
//! only a test keeps honest, while here there is nothing to drift. The cargo action of the
//! build graph sees the file because //hw/aurora_flow:kernel_description is a member of
//! //:cargo_workspace.

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    // Relative to the package root, as cargo resolves it: an absolute path would tie the
    // fingerprint to this checkout, and a second checkout sharing the target directory (the
    // reproducibility check's) would rebuild every crate that uses these constants.
    const KERNEL_TOML: &str = "../../hw/aurora_flow/kernel.toml";
    println!("cargo:rerun-if-changed={KERNEL_TOML}");
    let desc = aurora_flow_desc::load(&manifest.join(KERNEL_TOML))
        .unwrap_or_else(|e| panic!("{e:#} (the AuroraFlow kernel description)"));
    let dest = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("registers.rs");
    std::fs::write(dest, aurora_flow_desc::rust_constants(&desc)).unwrap();
}
