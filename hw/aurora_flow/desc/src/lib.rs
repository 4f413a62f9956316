//! The AuroraFlow kernel description, `hw/aurora_flow/kernel.toml`, and every copy of its
//! facts that other files need, generated: the rule's limits (`hw/aurora_flow/desc.bzl`),
//! the RTL package and parameter checks (`rtl/af_kernel_pkg.sv`, `rtl/af_param_checks.svh`),
//! the control port's declarations (`rtl/af_axil_ports.svh`), the README tables
//! (`generated`), the host's constants (`host_constants`, at the host's build time) and each
//! instance's Vivado package (`package`). `xdc` and `cdc` read the packaging's XDC and check
//! that every clock-domain crossing of the RTL is bounded by a constraint in force
//! (`tests/xdc_precedence.rs`).

pub mod cdc;
mod description;
pub mod generated;
mod host_constants;
pub mod package;
mod render;
pub mod xdc;

pub use description::{
    load, AxiliteSignal, FlowControl, Kernel, KernelDesc, Link, Parameter, Register,
};
pub use host_constants::rust_constants;
pub use render::{
    bzl, readme_parameters, readme_registers, sv_axil_ports, sv_package, sv_param_checks,
};

/// Writes `text` to `path` through a temporary file beside it, so no reader sees half a file.
pub fn write_atomic(path: &std::path::Path, text: &str) -> anyhow::Result<()> {
    use anyhow::Context;
    let dir = path.parent().unwrap_or(std::path::Path::new("."));
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    std::io::Write::write_all(&mut tmp, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))?;
    tmp.persist(path)
        .with_context(|| format!("renaming to {}", path.display()))?;
    Ok(())
}
