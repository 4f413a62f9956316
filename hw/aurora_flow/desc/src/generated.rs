//! Every file (or README block) generated from kernel.toml, by its path from the project
//! root: `regenerate` writes them, `stale` names those that differ. The host's Rust constants
//! are not among them: host/aurora/build.rs generates them at build time.

use crate::{render, KernelDesc};
use anyhow::{Context, Result};
use std::path::Path;

/// Whole generated files: (path from the project root, text).
pub fn files(d: &KernelDesc) -> Vec<(&'static str, String)> {
    vec![
        ("hw/aurora_flow/desc.bzl", render::bzl(d)),
        ("hw/aurora_flow/rtl/af_kernel_pkg.sv", render::sv_package(d)),
        (
            "hw/aurora_flow/rtl/af_param_checks.svh",
            render::sv_param_checks(d),
        ),
        (
            "hw/aurora_flow/rtl/af_axil_ports.svh",
            render::sv_axil_ports(d),
        ),
    ]
}

/// Documents with generated tables between `<!-- kernel.toml: NAME -->` and
/// `<!-- end kernel.toml: NAME -->`.
pub const DOCUMENTS: [&str; 2] = ["hw/aurora_flow/README.md", "docs/auroraflow.md"];

/// The tables of a document: (block name, text).
fn blocks(d: &KernelDesc) -> [(&'static str, String); 2] {
    [
        ("parameters", render::readme_parameters(d)),
        ("registers", render::readme_registers(d)),
    ]
}

/// `text` with every block replaced by what the description gives; an error names the
/// missing marker.
pub fn with_blocks(d: &KernelDesc, text: &str, file: &str) -> Result<String> {
    let mut out = text.to_string();
    for (name, body) in blocks(d) {
        let start = format!("<!-- kernel.toml: {name} -->\n");
        let end = format!("<!-- end kernel.toml: {name} -->");
        let a = out
            .find(&start)
            .with_context(|| format!("{file}: no `{start}` marker"))?
            + start.len();
        let b = out[a..]
            .find(&end)
            .with_context(|| format!("{file}: no `{end}` marker"))?
            + a;
        out.replace_range(a..b, &body);
    }
    Ok(out)
}

/// Every generated path with the text it must have, documents included.
pub fn expected(root: &Path, d: &KernelDesc) -> Result<Vec<(String, String)>> {
    let mut all: Vec<(String, String)> = files(d)
        .into_iter()
        .map(|(p, t)| (p.to_string(), t))
        .collect();
    for doc in DOCUMENTS {
        let text =
            std::fs::read_to_string(root.join(doc)).with_context(|| format!("reading {doc}"))?;
        all.push((doc.to_string(), with_blocks(d, &text, doc)?));
    }
    Ok(all)
}

/// The generated paths whose bytes differ from what the description gives.
pub fn stale(root: &Path, d: &KernelDesc) -> Result<Vec<String>> {
    Ok(expected(root, d)?
        .into_iter()
        .filter(|(path, text)| {
            std::fs::read(root.join(path)).ok().as_deref() != Some(text.as_bytes())
        })
        .map(|(path, _)| path)
        .collect())
}

/// Writes every stale generated file (temporary file, then rename); returns their paths.
pub fn regenerate(root: &Path, d: &KernelDesc) -> Result<Vec<String>> {
    let stale = stale(root, d)?;
    for (path, text) in expected(root, d)? {
        if stale.contains(&path) {
            crate::write_atomic(&root.join(&path), &text)?;
        }
    }
    Ok(stale)
}
