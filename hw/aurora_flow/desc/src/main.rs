//! `aurora-flow-desc KIND KERNEL_TOML OUT`: writes one generated file (KIND: bzl, sv-package, sv-axil-ports,
//! readme-parameters, readme-registers) atomically (temporary file, then rename).

use anyhow::{bail, Context, Result};
use std::path::Path;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [kind, toml, out] = args.as_slice() else {
        bail!("usage: aurora-flow-desc bzl|sv-package|sv-axil-ports|readme-parameters|readme-registers KERNEL_TOML OUT");
    };
    let desc = aurora_flow_desc::load(Path::new(toml))?;
    let text = match kind.as_str() {
        "bzl" => aurora_flow_desc::bzl(&desc),
        "sv-package" => aurora_flow_desc::sv_package(&desc),
        "sv-axil-ports" => aurora_flow_desc::sv_axil_ports(&desc),
        "readme-parameters" => aurora_flow_desc::readme_parameters(&desc),
        "readme-registers" => aurora_flow_desc::readme_registers(&desc),
        other => bail!(
            "unknown kind `{other}`; use bzl, sv-package, sv-axil-ports, readme-parameters or readme-registers"
        ),
    };
    let out = Path::new(out);
    let tmp = out.with_extension("tmp");
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, out).with_context(|| format!("renaming to {}", out.display()))?;
    Ok(())
}
