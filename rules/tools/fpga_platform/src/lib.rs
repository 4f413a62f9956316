//! The one reader of a board's facts (`toolchains/fpga_platforms/<platform>.toml`): resources
//! per SLR, memory banks, QSFP ports with their GT and reference-clock interfaces, the
//! free-running clock, kernel clocks, the XRT names. Every consumer (deploy tool, partitioner
//! inputs, xclbin writer, the rules through the generated Starlark module) reads a board
//! through this crate, so a fact has one source: the file.

mod starlark;

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::Deserialize;

pub use starlark::starlark_module;

/// The resource kinds every SLR table must give (FINN's estimate names).
pub const RESOURCES: [&str; 5] = ["LUT", "FF", "BRAM_18K", "URAM", "DSP"];

/// One platform file, checked.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Platform {
    /// The XRT / v++ platform name (must equal the file's stem).
    pub name: String,
    /// The card, as a person names it ("U280").
    pub board: String,
    /// The board id XRT writes into an xclbin's platform metadata ("u280").
    pub board_id: String,
    /// The FPGA part the kernels are built for.
    pub part: String,
    /// The Slurm feature that selects a node with this card.
    #[serde(default)]
    pub xrt_constraint: String,
    pub default_kernel_clock_mhz: f64,
    /// The fastest kernel clock the platform runs (a description asking for more is refused).
    pub max_kernel_clock_mhz: f64,
    /// Memory kind (HBM, DDR, PLRAM) -> number of banks.
    pub memory: BTreeMap<String, u32>,
    /// Memory kind -> bytes of one bank.
    pub bank_bytes: BTreeMap<String, u64>,
    /// Memory kind -> device address of its bank 0 (the others follow back to back).
    pub bank_base: BTreeMap<String, u64>,
    /// SLR name -> resource kind -> count.
    #[serde(rename = "slr")]
    pub slr_resources: BTreeMap<String, BTreeMap<String, f64>>,
    pub qsfp: Vec<Qsfp>,
    pub init_clk: InitClk,
    /// The SLRs, in name order (the keys of `[slr.*]`).
    #[serde(skip)]
    pub slrs: Vec<String>,
    /// Resource kind -> the sum over the SLRs.
    #[serde(skip)]
    pub resources: BTreeMap<String, f64>,
    /// The file as given.
    #[serde(skip)]
    pub source: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Qsfp {
    pub port: u32,
    pub refclk: String,
    pub gt: String,
    pub slr: String,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InitClk {
    pub source: String,
    pub freq_mhz: f64,
}

impl Platform {
    /// Reads and checks a platform file; errors name the file, the line and the key.
    pub fn load(path: &Path) -> Result<Platform> {
        let shown = path.display().to_string();
        let text =
            std::fs::read_to_string(path).with_context(|| format!("{shown}: cannot read"))?;
        Self::parse(&shown, &text)
    }

    /// `parse` of a file's text; `shown` is the path errors name.
    pub fn parse(shown: &str, text: &str) -> Result<Platform> {
        let mut p: Platform = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            match line {
                Some(l) => anyhow::anyhow!("{shown}:{l}: {}", e.message().trim_end()),
                None => anyhow::anyhow!("{shown}: {}", e.message().trim_end()),
            }
        })?;
        p.source = shown.to_string();
        p.check(text)?;
        p.slrs = p.slr_resources.keys().cloned().collect();
        for r in RESOURCES {
            let sum = p.slr_resources.values().map(|s| s[r]).sum();
            p.resources.insert(r.to_string(), sum);
        }
        Ok(p)
    }

    fn check(&self, text: &str) -> Result<()> {
        let at = |key: &str| {
            let line = text
                .lines()
                .position(|l| l.trim_start().starts_with(key))
                .map_or(String::new(), |i| format!("{}:", i + 1));
            format!("{}:{line} {key}", self.source)
        };
        let stem = Path::new(&self.source).file_stem().and_then(|s| s.to_str());
        if stem.is_some_and(|s| s != self.name) {
            bail!(
                "{} must equal the file's name ({}.toml): one file per platform, named after it",
                at("name"),
                self.name
            );
        }
        if !(self.max_kernel_clock_mhz > 0.0
            && self.default_kernel_clock_mhz > 0.0
            && self.default_kernel_clock_mhz <= self.max_kernel_clock_mhz)
        {
            bail!(
                "{}: must be positive and at least default_kernel_clock_mhz",
                at("max_kernel_clock_mhz")
            );
        }
        if self.slr_resources.is_empty() {
            bail!(
                "{}: no [slr.<name>] table; give each SLR's resources",
                self.source
            );
        }
        for (slr, res) in &self.slr_resources {
            for r in RESOURCES {
                match res.get(r) {
                    Some(v) if v.is_finite() && *v >= 0.0 => {}
                    Some(v) => bail!("{}: {r} = {v} is not a count", at(&format!("[slr.{slr}]"))),
                    None => bail!(
                        "{}: has no {r} (give {})",
                        at(&format!("[slr.{slr}]")),
                        RESOURCES.join(", ")
                    ),
                }
            }
            if let Some(k) = res.keys().find(|k| !RESOURCES.contains(&k.as_str())) {
                bail!(
                    "{}: unknown resource {k} (known: {})",
                    at(&format!("[slr.{slr}]")),
                    RESOURCES.join(", ")
                );
            }
        }
        for kind in self.memory.keys() {
            if !self.bank_bytes.contains_key(kind) {
                bail!(
                    "{}: no size for the {kind} banks of [memory]",
                    at("[bank_bytes]")
                );
            }
            if !self.bank_base.contains_key(kind) {
                bail!(
                    "{}: no base address for the {kind} banks of [memory]",
                    at("[bank_base]")
                );
            }
        }
        let mut ports = std::collections::BTreeSet::new();
        for q in &self.qsfp {
            if !ports.insert(q.port) {
                bail!("{}: QSFP port {} is listed twice", at("[[qsfp]]"), q.port);
            }
            if !self.slr_resources.contains_key(&q.slr) {
                bail!(
                    "{}: QSFP port {} is in {}, which is not an [slr.*] of the file",
                    at("[[qsfp]]"),
                    q.port,
                    q.slr
                );
            }
        }
        Ok(())
    }

    pub fn qsfp(&self, port: u32) -> Option<&Qsfp> {
        self.qsfp.iter().find(|q| q.port == port)
    }

    pub fn ports(&self) -> Vec<u32> {
        self.qsfp.iter().map(|q| q.port).collect()
    }

    /// Bytes of the bank `kind` (HBM, DDR, PLRAM), if the platform has that memory.
    pub fn bank_size(&self, kind: &str) -> Option<u64> {
        self.memory
            .get(kind)
            .and(self.bank_bytes.get(kind).copied())
    }

    /// Device address of bank `index` of `kind`: the kind's base plus `index` banks, if the
    /// platform has that bank.
    pub fn bank_address(&self, kind: &str, index: u64) -> Option<u64> {
        let count = u64::from(*self.memory.get(kind)?);
        let bytes = self.bank_size(kind)?;
        (index < count).then(|| self.bank_base[kind] + index * bytes)
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

    /// `HBM[0..31], DDR[0..1]`: the banks, for messages.
    pub fn memory_summary(&self) -> String {
        self.memory
            .iter()
            .map(|(k, n)| format!("{k}[0..{}]", n.saturating_sub(1)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Every platform file of a directory (`toolchains/fpga_platforms/`), by name.
pub fn load_dir(dir: &Path) -> Result<BTreeMap<String, Platform>> {
    let mut out = BTreeMap::new();
    let entries =
        std::fs::read_dir(dir).with_context(|| format!("{}: cannot list", dir.display()))?;
    let mut paths: Vec<_> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
    {
        let p = Platform::load(&path)?;
        out.insert(p.name.clone(), p);
    }
    Ok(out)
}
