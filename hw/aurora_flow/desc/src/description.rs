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
    pub link: Link,
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
    #[serde(default)]
    pub power_of_two: bool,
    /// limits of the FIFO depth, `value / fifo_width` words
    pub min_words: Option<i64>,
    pub max_words: Option<i64>,
    /// the simulation model's default where it differs from the hardware's
    pub sim_default: Option<i64>,
}

/// The Aurora 64B/66B link's physics ([link]): what the clocks, the gearbox and clock
/// compensation make of the line rate.
#[derive(Debug, Deserialize)]
pub struct Link {
    pub lanes: u32,
    pub line_rate_gbps: f64,
    pub refclk_mhz: f64,
    pub init_clk_mhz: f64,
    pub gearbox_data_cycles: u32,
    pub gearbox_period_cycles: u32,
    pub cc_cycles: u32,
    pub cc_period_cycles: u32,
}

impl Link {
    /// The core's user clock: one 64-bit word per lane per cycle.
    pub fn user_clk_mhz(&self) -> f64 {
        self.line_rate_gbps * 1000.0 / 64.0
    }

    /// Bytes per user-clock cycle (all lanes).
    pub fn beat_bytes(&self) -> u32 {
        self.lanes * 8
    }

    /// The fraction of user-clock cycles that carry data (gearbox pauses, clock compensation).
    pub fn data_fraction(&self) -> f64 {
        let gearbox = f64::from(self.gearbox_data_cycles) / f64::from(self.gearbox_period_cycles);
        gearbox * (1.0 - f64::from(self.cc_cycles) / f64::from(self.cc_period_cycles))
    }
}

/// The in-flight budget: (depth - prog_full) * fifo_width / link_beat_bytes must be at least
/// fixed_inflight_beats + beats_per_metre * cable_m.
#[derive(Clone, Debug, Deserialize)]
pub struct FlowControl {
    pub link_beat_bytes: i64,
    pub fixed_inflight_beats: i64,
    pub beats_per_metre: i64,
    pub default_cable_m: i64,
}

impl FlowControl {
    /// Link beats still arriving after an XOFF over `cable_m` metres of fibre (a fraction of
    /// a metre costs a whole beat).
    pub fn need_beats(&self, cable_m: f64) -> i64 {
        self.fixed_inflight_beats + (self.beats_per_metre as f64 * cable_m).ceil() as i64
    }

    /// Link beats an RX FIFO holds in `headroom_words` words of `fifo_width` bytes above
    /// prog_full.
    pub fn headroom_beats(&self, headroom_words: i64, fifo_width: i64) -> i64 {
        headroom_words * fifo_width / self.link_beat_bytes
    }
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
    /// A field's bit range `(hi, lo)` from "hi:lo" or "bit", within the 32-bit register.
    pub fn bit_range(&self, field: &str, spec: &str) -> Result<(u32, u32)> {
        let parse = |t: &str| t.trim().parse::<u32>().ok();
        let range = match spec.split_once(':') {
            Some((hi, lo)) => parse(hi).zip(parse(lo)),
            None => parse(spec).map(|b| (b, b)),
        };
        match range {
            Some((hi, lo)) if hi >= lo && hi < 32 => Ok((hi, lo)),
            _ => bail!(
                "[[register]] {}.{field}: bad bit range '{spec}' (\"hi:lo\" or \"bit\", below 32)",
                self.name
            ),
        }
    }

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
        .and_then(|()| desc.check_link())
        .and_then(|()| desc.check_fields())
        .with_context(|| format!("{}: not a valid kernel description", path.display()))?;
    Ok(desc)
}

impl KernelDesc {
    /// The parameter whose RTL name is `rtl`.
    pub fn parameter(&self, rtl: &str) -> Option<&Parameter> {
        self.parameters.iter().find(|p| p.rtl == rtl)
    }

    fn check_fields(&self) -> Result<()> {
        for r in &self.registers {
            for (field, spec) in r.fields.iter().flatten() {
                r.bit_range(field, spec)?;
            }
        }
        Ok(())
    }

    /// [flow_control] counts in link beats of the width [link] gives.
    fn check_link(&self) -> Result<()> {
        if i64::from(self.link.beat_bytes()) != self.flow_control.link_beat_bytes {
            bail!(
                "[flow_control] link_beat_bytes = {}, but [link] has {} lanes of 8 bytes",
                self.flow_control.link_beat_bytes,
                self.link.lanes
            );
        }
        // the behavioural core (sim/model/aurora_sim_ip.sv) pauses one cycle per period
        if self.link.gearbox_data_cycles + 1 != self.link.gearbox_period_cycles {
            bail!(
                "[link] gearbox_data_cycles = {} of {}: the gearbox pauses one cycle per period",
                self.link.gearbox_data_cycles,
                self.link.gearbox_period_cycles
            );
        }
        Ok(())
    }
}

impl Parameter {
    /// Whether `value` is within this parameter's own limits (`fifo_width` for the FIFO
    /// depth limits); the error says what is allowed.
    pub fn check(&self, value: i64, fifo_width: i64) -> std::result::Result<(), String> {
        let unit = self
            .unit
            .as_deref()
            .map(|u| format!(" ({u})"))
            .unwrap_or_default();
        let listed: Option<Vec<i64>> = if self.kind == "bool" {
            Some(vec![0, 1])
        } else if let Some(values) = &self.values {
            Some(values.values().copied().collect())
        } else {
            self.allowed.clone()
        };
        if let Some(listed) = listed.filter(|l| !l.contains(&value)) {
            let text = listed.iter().map(|v| v.to_string()).collect::<Vec<_>>();
            return Err(format!("{value}: must be one of {}{unit}", text.join(", ")));
        }
        if self.power_of_two && (value <= 0 || value & (value - 1) != 0) {
            return Err(format!("{value}: must be a power of two{unit}"));
        }
        if let (Some(lo), Some(hi)) = (self.min_words, self.max_words) {
            let depth = value / fifo_width;
            if depth < lo || depth > hi {
                return Err(format!(
                    "{value} / {fifo_width} = {depth} words: the FIFO depth must be {lo}..{hi} words"
                ));
            }
        }
        if let (Some(lo), Some(hi)) = (self.min, self.max) {
            if value < lo || value > hi {
                return Err(format!("{value}: must be {lo}..{hi}{unit}"));
            }
        }
        Ok(())
    }

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
