//! Device budgets: which FPGAs, how much of each resource, at which clock, with how
//! many network ports.

use std::path::Path;

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

use crate::resources::{Res, NUM_RES, RES_NAMES};

/// Alveo U280 (XCU280, the VU37P die) totals from AMD DS963 "Alveo U280 Data Center
/// Accelerator Card Data Sheet", Table 1: 1,304K LUTs, 2,607K registers, 2,016 36-Kb
/// block RAMs (= 4,032 BRAM18), 960 UltraRAMs, 9,024 DSP slices; two QSFP28 cages.
pub const U280: Res = Res {
    lut: 1_304_000.0,
    ff: 2_607_000.0,
    bram18: 4032.0,
    uram: 960.0,
    dsp: 9024.0,
};
pub const U280_QSFP_PORTS: u32 = 2;

/// Area of one AuroraFlow streaming kernel on a U280 (the paper's place & route,
/// paper/figures.toml [area]), reserved once per port a device may use.
pub fn aurora_streaming() -> Res {
    let a = &paper::figures().area.streaming;
    Res {
        lut: f64::from(a.lut),
        ff: f64::from(a.ff),
        bram18: 2.0 * f64::from(a.bram36),
        uram: 0.0,
        dsp: 0.0,
    }
}

#[derive(Clone, Debug, Deserialize, Serialize)]
pub struct DeviceSpec {
    pub name: String,
    /// "U280" fills in `total` and `ports` from the data sheet.
    #[serde(default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub total: Option<Res>,
    pub clk_mhz: f64,
    #[serde(default)]
    pub ports: Option<u32>,
    /// Upper bound per resource as a fraction of `total` (default 0.8 each, FINN+'s
    /// max_utilization default).
    #[serde(default)]
    pub max_util: Option<Res>,
    /// Lower bound per resource as a fraction of `total` (default 0).
    #[serde(default)]
    pub min_util: Option<Res>,
    /// Reserve one AuroraFlow kernel's area per port (default true).
    #[serde(default)]
    pub reserve_link_kernels: Option<bool>,
}

/// A device with every default resolved.
#[derive(Clone, Debug, Serialize)]
pub struct Device {
    pub name: String,
    pub total: Res,
    pub clk_mhz: f64,
    pub ports: u32,
    /// Absolute upper bound for the dataflow layers (after link-kernel reservation).
    pub cap: Res,
    /// Absolute lower bound.
    pub floor: Res,
    pub reserved: Res,
}

#[derive(Deserialize)]
struct DevicesFile {
    devices: Vec<DeviceSpec>,
}

impl DeviceSpec {
    pub fn resolve(&self) -> Result<Device> {
        let (kind_total, kind_ports) = match self.kind.as_deref() {
            Some("U280") | Some("u280") => (Some(U280), Some(U280_QSFP_PORTS)),
            None => (None, None),
            Some(k) => bail!(
                "device {}: unknown kind {k:?} (known: U280; or give total and ports)",
                self.name
            ),
        };
        let total = self
            .total
            .or(kind_total)
            .with_context(|| format!("device {}: no total resources", self.name))?;
        let ports = self
            .ports
            .or(kind_ports)
            .with_context(|| format!("device {}: no port count", self.name))?;
        if self.clk_mhz <= 0.0 {
            bail!("device {}: clk_mhz must be positive", self.name);
        }
        let max_util = self.max_util.unwrap_or(Res {
            lut: 0.8,
            ff: 0.8,
            bram18: 0.8,
            uram: 0.8,
            dsp: 0.8,
        });
        let min_util = self.min_util.unwrap_or_default();
        let mut reserved = Res::default();
        if self.reserve_link_kernels.unwrap_or(true) {
            for _ in 0..ports {
                reserved = reserved.add(&aurora_streaming());
            }
        }
        let mut cap = Res::default();
        let mut floor = Res::default();
        for r in 0..NUM_RES {
            let (hi, lo) = (max_util.get(r), min_util.get(r));
            if !(0.0..=1.0).contains(&hi) || !(0.0..=1.0).contains(&lo) || lo > hi {
                bail!(
                    "device {}: {} bounds must satisfy 0 <= min_util <= max_util <= 1",
                    self.name,
                    RES_NAMES[r]
                );
            }
            cap.set(r, (total.get(r) * hi - reserved.get(r)).max(0.0));
            floor.set(r, total.get(r) * lo);
        }
        Ok(Device {
            name: self.name.clone(),
            total,
            clk_mhz: self.clk_mhz,
            ports,
            cap,
            floor,
            reserved,
        })
    }
}

pub fn load(path: &Path) -> Result<Vec<Device>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let f: DevicesFile = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a devices JSON", path.display()))?;
    resolve_all(&f.devices).with_context(|| format!("{}", path.display()))
}

pub fn resolve_all(specs: &[DeviceSpec]) -> Result<Vec<Device>> {
    if specs.is_empty() {
        bail!("no devices given");
    }
    let devs = specs
        .iter()
        .map(DeviceSpec::resolve)
        .collect::<Result<Vec<_>>>()?;
    for (i, d) in devs.iter().enumerate() {
        if devs[..i].iter().any(|e| e.name == d.name) {
            bail!("device name {} appears twice", d.name);
        }
    }
    Ok(devs)
}

/// `n` identical U280s named fpga0..; `clk_mhz` per device.
pub fn u280s(n: usize, clk_mhz: f64) -> Vec<Device> {
    (0..n)
        .map(|i| {
            DeviceSpec {
                name: format!("fpga{i}"),
                kind: Some("U280".into()),
                total: None,
                clk_mhz,
                ports: None,
                max_util: None,
                min_util: None,
                reserve_link_kernels: None,
            }
            .resolve()
            .expect("U280 defaults are valid")
        })
        .collect()
}
