//! Device budgets: which FPGAs, how much of each resource, at which clock, with how
//! many network ports. A device names its board (`platform`), whose file
//! (toolchains/fpga_platforms/<platform>.toml, read by rules/tools/fpga_platform) gives its
//! totals and QSFP ports: the partitioner keeps no board facts of its own.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use fpga_platform::Platform;
use serde::{Deserialize, Serialize};

use crate::resources::{Res, NUM_RES, RES_NAMES};

/// The boards a devices JSON may name: platform files by their name (`--platform FILE`, the
/// files of toolchains/fpga_platforms/), and the directory a path in the JSON is relative to.
#[derive(Clone, Debug, Default)]
pub struct Boards {
    pub known: BTreeMap<String, Platform>,
    pub base: PathBuf,
}

impl Boards {
    /// The platform files given, each read and checked by the one reader.
    pub fn load(files: &[PathBuf]) -> Result<Boards> {
        let mut known = BTreeMap::new();
        for f in files {
            let p = Platform::load(f)?;
            known.insert(p.name.clone(), p);
        }
        Ok(Boards {
            known,
            base: PathBuf::new(),
        })
    }

    /// Every platform file of a directory (toolchains/fpga_platforms/).
    pub fn dir(dir: &Path) -> Result<Boards> {
        Ok(Boards {
            known: fpga_platform::load_dir(dir)?,
            base: PathBuf::new(),
        })
    }

    /// `platform` of a device: a known platform's name, or a path to a platform file
    /// (relative to the devices JSON).
    pub fn get(&self, device: &str, platform: &str) -> Result<Platform> {
        if let Some(p) = self.known.get(platform) {
            return Ok(p.clone());
        }
        if platform.ends_with(".toml") {
            return Platform::load(&self.base.join(platform))
                .with_context(|| format!("device {device}: platform file {platform}"));
        }
        let known: Vec<&str> = self.known.keys().map(String::as_str).collect();
        bail!(
            "device {device}: platform {platform:?} is not one of the boards given ({}); name \
             a file of toolchains/fpga_platforms/ (pass it with --platform) or a path to one",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )
    }
}

/// A board's totals as the partitioner budgets them: the sums of its file's SLR tables.
pub fn board_total(p: &Platform) -> Res {
    let r = |k: &str| p.resources.get(k).copied().unwrap_or(0.0);
    Res {
        lut: r("LUT"),
        ff: r("FF"),
        bram18: r("BRAM_18K"),
        uram: r("URAM"),
        dsp: r("DSP"),
    }
}

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
    /// The board: a platform name (toolchains/fpga_platforms/<platform>.toml) or a path to
    /// a platform file; fills in `total` and `ports` from the file.
    #[serde(default)]
    pub platform: Option<String>,
    /// Refused: the board facts `kind = "U280"` stood for live in the platform file now.
    #[serde(default, skip_serializing)]
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
    /// A device whose budgets are given in full (`total`, `ports`); one naming a platform
    /// needs [`DeviceSpec::resolve_with`].
    pub fn resolve(&self) -> Result<Device> {
        self.resolve_with(&Boards::default())
    }

    pub fn resolve_with(&self, boards: &Boards) -> Result<Device> {
        if let Some(k) = &self.kind {
            bail!(
                "device {}: kind = {k:?} is gone; name the board's platform file instead \
                 (\"platform\": \"xilinx_u280_gen3x16_xdma_1_202211_1\", \
                 toolchains/fpga_platforms/)",
                self.name
            );
        }
        let board = match &self.platform {
            Some(p) => Some(boards.get(&self.name, p)?),
            None => None,
        };
        let total = self
            .total
            .or(board.as_ref().map(board_total))
            .with_context(|| format!("device {}: no total resources", self.name))?;
        let ports = self
            .ports
            .or(board.as_ref().map(|b| b.qsfp.len() as u32))
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
    load_with(path, &Boards::default())
}

/// The devices of a devices JSON; a `platform` is looked up in `boards` or, as a path,
/// relative to the JSON's directory.
pub fn load_with(path: &Path, boards: &Boards) -> Result<Vec<Device>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let f: DevicesFile = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a devices JSON", path.display()))?;
    let boards = Boards {
        known: boards.known.clone(),
        base: path.parent().map(Path::to_path_buf).unwrap_or_default(),
    };
    resolve_all_with(&f.devices, &boards).with_context(|| format!("{}", path.display()))
}

pub fn resolve_all(specs: &[DeviceSpec]) -> Result<Vec<Device>> {
    resolve_all_with(specs, &Boards::default())
}

pub fn resolve_all_with(specs: &[DeviceSpec], boards: &Boards) -> Result<Vec<Device>> {
    if specs.is_empty() {
        bail!("no devices given");
    }
    let devs = specs
        .iter()
        .map(|s| s.resolve_with(boards))
        .collect::<Result<Vec<_>>>()?;
    for (i, d) in devs.iter().enumerate() {
        if devs[..i].iter().any(|e| e.name == d.name) {
            bail!("device name {} appears twice", d.name);
        }
    }
    Ok(devs)
}

/// `n` identical cards of `board` named fpga0..; `clk_mhz` per device; FINN+'s default
/// budgets (80 % of each resource).
pub fn cards(board: &Platform, n: usize, clk_mhz: f64) -> Vec<Device> {
    (0..n)
        .map(|i| {
            DeviceSpec {
                name: format!("fpga{i}"),
                platform: None,
                kind: None,
                total: Some(board_total(board)),
                clk_mhz,
                ports: Some(board.qsfp.len() as u32),
                max_util: None,
                min_util: None,
                reserve_link_kernels: None,
            }
            .resolve()
            .expect("a checked platform file gives valid budgets")
        })
        .collect()
}
