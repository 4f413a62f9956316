//! The platform description (toolchains/fpga_platforms/<name>.toml): what the link step may
//! bind to (SLRs, memories, QSFP interfaces) and the device's resources.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::Result;
use serde::Deserialize;

use crate::diag::Source;

#[derive(Clone, Debug, Deserialize)]
pub struct Platform {
    pub name: String,
    #[serde(default)]
    pub board: String,
    #[serde(default)]
    pub part: String,
    #[serde(default)]
    pub xrt_constraint: String,
    #[serde(default)]
    pub default_kernel_clock_mhz: f64,
    /// The fastest kernel clock the platform runs (a description asking for more is refused).
    pub max_kernel_clock_mhz: f64,
    pub slrs: Vec<String>,
    /// Memory kind (HBM, DDR, PLRAM) -> number of banks.
    pub memory: BTreeMap<String, u32>,
    pub resources: BTreeMap<String, f64>,
    pub qsfp: Vec<Qsfp>,
    pub init_clk: InitClk,
    #[serde(skip)]
    pub source: String,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Qsfp {
    pub port: u32,
    pub refclk: String,
    pub gt: String,
    pub slr: String,
}

#[derive(Clone, Debug, Deserialize)]
pub struct InitClk {
    pub source: String,
    pub freq_mhz: f64,
}

impl Platform {
    pub fn load(path: &Path) -> Result<Platform> {
        let src = Source::read(path)?;
        let mut p: Platform = toml::from_str(&src.text).map_err(|e| src.toml_error(e))?;
        let constraint = Some(&p.xrt_constraint).filter(|c| !c.is_empty());
        if let Some(why) = constraint.and_then(|c| crate::fields::slurm_constraint(c)) {
            anyhow::bail!("{}: xrt_constraint {:?} {why}", src.path, p.xrt_constraint);
        }
        if !(p.max_kernel_clock_mhz > 0.0 && p.default_kernel_clock_mhz <= p.max_kernel_clock_mhz) {
            anyhow::bail!(
                "{}: max_kernel_clock_mhz must be positive and at least default_kernel_clock_mhz",
                src.path
            );
        }
        p.source = src.path;
        Ok(p)
    }

    pub fn qsfp(&self, port: u32) -> Option<&Qsfp> {
        self.qsfp.iter().find(|q| q.port == port)
    }

    pub fn ports(&self) -> Vec<u32> {
        self.qsfp.iter().map(|q| q.port).collect()
    }

    /// Checks a memory binding such as `HBM[3]`, `HBM[0:31]` or `DDR[1]`.
    pub fn check_bank(&self, bank: &str) -> std::result::Result<(), String> {
        let bad = || {
            format!(
                "memory '{bank}' is not of the form KIND[n] or KIND[a:b] (platform {} has {})",
                self.name,
                self.memory_summary()
            )
        };
        let (kind, rest) = bank.split_once('[').ok_or_else(bad)?;
        let idx = rest.strip_suffix(']').ok_or_else(bad)?;
        if !idx.bytes().all(|b| b.is_ascii_digit() || b == b':') {
            return Err(bad());
        }
        let count = *self.memory.get(kind).ok_or_else(|| {
            format!(
                "platform {} has no {kind} memory (it has {})",
                self.name,
                self.memory_summary()
            )
        })?;
        // No spaces: the bank is written into the v++ config as given.
        let (lo, hi) = match idx.split_once(':') {
            Some((a, b)) => (a.parse::<u32>(), b.parse::<u32>()),
            None => (idx.parse::<u32>(), idx.parse::<u32>()),
        };
        let (lo, hi) = (lo.map_err(|_| bad())?, hi.map_err(|_| bad())?);
        if lo > hi || hi >= count {
            return Err(format!(
                "platform {} has {kind}[0..{}], not {bank}",
                self.name,
                count - 1
            ));
        }
        Ok(())
    }

    pub fn check_slr(&self, slr: &str) -> std::result::Result<(), String> {
        if self.slrs.iter().any(|s| s == slr) {
            Ok(())
        } else {
            Err(format!(
                "platform {} has SLRs {}, not {slr}",
                self.name,
                self.slrs.join(", ")
            ))
        }
    }

    fn memory_summary(&self) -> String {
        self.memory
            .iter()
            .map(|(k, n)| format!("{k}[0..{}]", n.saturating_sub(1)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}
