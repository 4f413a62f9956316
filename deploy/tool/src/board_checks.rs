//! A description against the board its target is built for: the `platform` it names and
//! the kernel clocks it asks for (kept apart from the description's parsing, which only
//! calls them).

use std::path::Path;

use anyhow::Result;
use toml::Spanned;

use crate::deployment::Number;
use crate::diag::Source;
use crate::platform::Platform;

/// Why the description's `platform` is not the board its target is built for: a board with
/// no file beside the target's (unknown), or another board than the target's (each
/// deployment is one board; `platform` of its `fpga_deployment` in deploy/BUCK selects it).
pub fn wrong_platform(named: &str, platform: &Platform) -> String {
    let dir = Path::new(&platform.source)
        .parent()
        .unwrap_or(Path::new(""));
    let file = dir.join(format!("{named}.toml"));
    if named.contains('/') || !file.is_file() {
        let mut known: Vec<String> = std::fs::read_dir(dir)
            .into_iter()
            .flatten()
            .filter_map(|e| {
                e.ok()?
                    .file_name()
                    .to_str()?
                    .strip_suffix(".toml")
                    .map(String::from)
            })
            .collect();
        known.sort();
        format!(
            "platform '{named}' is not known: the boards are {} (one file each in {}); name \
             one of them, or add the board's file (docs/guide.md, \"A new board\")",
            known.join(", "),
            dir.display()
        )
    } else {
        format!(
            "platform '{named}' is not the board this target is built for, '{}' ({}): every \
             card of a deployment is one board; set `platform = \"{named}\"` on its \
             fpga_deployment in deploy/BUCK, or name '{}' here",
            platform.name, platform.source, platform.name
        )
    }
}

/// A kernel clock the platform can run: positive, finite, at most the platform's maximum.
pub fn check_clock(src: &Source, c: &Spanned<Number>, platform: &Platform) -> Result<()> {
    let mhz = c.get_ref().get();
    if !(mhz > 0.0 && mhz.is_finite()) {
        return Err(src.at(&c.span(), "clock_mhz must be a positive number of MHz"));
    }
    if mhz > platform.max_kernel_clock_mhz {
        return Err(src.at(
            &c.span(),
            format!(
                "clock_mhz = {mhz} is above {} MHz, the fastest kernel clock of platform {} \
                 ({}); choose at most {} MHz",
                platform.max_kernel_clock_mhz,
                platform.name,
                platform.source,
                platform.max_kernel_clock_mhz
            ),
        ));
    }
    Ok(())
}
