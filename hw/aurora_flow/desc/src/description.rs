//! Reading `kernel.toml` (its schema is documented in the file itself).

use anyhow::{bail, Context, Result};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Debug, Deserialize)]
pub struct KernelDesc {
    pub kernel: Kernel,
    #[serde(rename = "parameter")]
    pub parameters: Vec<Parameter>,
    pub flow_control: FlowControl,
    #[serde(rename = "register")]
    pub registers: Vec<Register>,
}

#[derive(Debug, Deserialize)]
pub struct Kernel {
    pub name: String,
    pub control: String,
    /// the AXI4-Lite control port's name, the prefix of its signals
    pub axilite_port: String,
    /// bytes of its address space
    pub axilite_range: u32,
    pub axilite_signals: Vec<AxiliteSignal>,
    pub core_status_ok: u32,
}

/// One signal of the control port: `<axilite_port>_<name>`.
#[derive(Debug, Deserialize)]
pub struct AxiliteSignal {
    pub name: String,
    pub dir: String,
    pub width: u32,
}

impl Kernel {
    /// log2 of `axilite_range`: the width of the address signals.
    pub fn axilite_addr_width(&self) -> u32 {
        self.axilite_range.trailing_zeros()
    }

    /// The width of the data signals (`wdata`).
    pub fn axilite_data_width(&self) -> u32 {
        self.axilite_signals
            .iter()
            .find(|s| s.name == "wdata")
            .map_or(0, |s| s.width)
    }

    /// The control port's signals agree with each other and with `axilite_range`.
    fn check_axilite(&self) -> Result<()> {
        if !self.axilite_range.is_power_of_two() {
            bail!(
                "[kernel] axilite_range = {}: must be a power of two",
                self.axilite_range
            );
        }
        let mut seen = std::collections::BTreeSet::new();
        for s in &self.axilite_signals {
            if !seen.insert(&s.name) {
                bail!("[kernel] axilite_signals: `{}` is listed twice", s.name);
            }
            if s.dir != "input" && s.dir != "output" {
                bail!(
                    "[kernel] axilite_signals: `{}` has dir `{}`; use input or output",
                    s.name,
                    s.dir
                );
            }
            let addr = s.name == "awaddr" || s.name == "araddr";
            if addr && s.width != self.axilite_addr_width() {
                bail!(
                    "[kernel] axilite_signals: `{}` is {} bits; axilite_range {} needs {}",
                    s.name,
                    s.width,
                    self.axilite_range,
                    self.axilite_addr_width()
                );
            }
        }
        if self.axilite_data_width() == 0 {
            bail!("[kernel] axilite_signals: no `wdata`");
        }
        Ok(())
    }
}

#[derive(Debug, Deserialize)]
pub struct Parameter {
    pub rtl: String,
    pub attr: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// an integer, or an expression such as "depth/2" (derived parameters)
    pub default: toml::Value,
    pub doc: String,
    pub unit: Option<String>,
    pub allowed: Option<Vec<i64>>,
    pub min: Option<i64>,
    pub max: Option<i64>,
    pub values: Option<BTreeMap<String, i64>>,
}

/// The in-flight budget: (depth - prog_full) * fifo_width / link_beat_bytes must be at least
/// fixed_inflight_beats + beats_per_metre * cable_m.
#[derive(Debug, Deserialize)]
pub struct FlowControl {
    pub link_beat_bytes: i64,
    pub fixed_inflight_beats: i64,
    pub beats_per_metre: i64,
    pub default_cable_m: i64,
}

#[derive(Debug, Deserialize)]
pub struct Register {
    pub offset: u32,
    pub name: String,
    pub access: String,
    pub doc: String,
    /// bit ranges, "hi:lo" or "bit"
    pub fields: Option<BTreeMap<String, String>>,
}

impl Register {
    /// The fields as `[hi:lo] NAME`, lowest bit first.
    pub fn fields_text(&self) -> Option<String> {
        let fields = self.fields.as_ref()?;
        let low = |r: &str| {
            r.rsplit(':')
                .next()
                .and_then(|b| b.parse::<u32>().ok())
                .unwrap_or(0)
        };
        let mut v: Vec<_> = fields.iter().collect();
        v.sort_by_key(|(_, r)| low(r));
        Some(
            v.iter()
                .map(|(n, r)| format!("[{r}] {n}"))
                .collect::<Vec<_>>()
                .join(", "),
        )
    }
}

/// Reads and parses the description, naming the file in any error.
pub fn load(path: &Path) -> Result<KernelDesc> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let desc: KernelDesc = toml::from_str(&text)
        .with_context(|| format!("{}: not a valid kernel description", path.display()))?;
    desc.kernel
        .check_axilite()
        .with_context(|| format!("{}: not a valid kernel description", path.display()))?;
    Ok(desc)
}

impl Parameter {
    /// The default as the README shows it.
    pub fn default_text(&self) -> String {
        match &self.default {
            toml::Value::String(s) => s.clone(),
            toml::Value::Integer(i) => i.to_string(),
            other => other.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Kernel;

    fn kernel(range: u32, awaddr_bits: u32) -> Kernel {
        toml::from_str(&format!(
            "name = \"k\"\ncontrol = \"ap_ctrl_none\"\naxilite_port = \"s_axi_control\"\n\
             axilite_range = {range}\ncore_status_ok = 0\naxilite_signals = [\n\
             {{ name = \"awaddr\", dir = \"input\", width = {awaddr_bits} }},\n\
             {{ name = \"wdata\", dir = \"input\", width = 32 }},\n]\n"
        ))
        .unwrap()
    }

    #[test]
    fn address_width_follows_the_range() {
        assert!(kernel(4096, 12).check_axilite().is_ok());
        let err = kernel(4096, 10).check_axilite().unwrap_err().to_string();
        assert!(
            err.contains("`awaddr` is 10 bits; axilite_range 4096 needs 12"),
            "{err}"
        );
        let err = kernel(3000, 12).check_axilite().unwrap_err().to_string();
        assert!(err.contains("must be a power of two"), "{err}");
    }
}
