//! The deploy tool's topology.json (`auroraforge-topology/1`) as a host reads it: which
//! device each rank runs, and (deployments of the user's own HLS kernels) the CUs' scalar
//! defaults and memory banks as the description gives them. Fields a host does not read are
//! ignored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
pub struct Topology {
    #[serde(default)]
    pub devices: Vec<TopologyDevice>,
    /// Absent in deployments that run the project's own kernels: no defaults.
    #[serde(default)]
    pub cus: Vec<CuDefaults>,
    /// The file it was read from, for messages.
    #[serde(skip)]
    pub path: PathBuf,
}

#[derive(Debug, Clone, Deserialize)]
pub struct TopologyDevice {
    pub name: String,
    pub rank: i64,
}

/// One CU of the description: its scalars' defaults and its arguments' memory banks.
#[derive(Debug, Clone, Deserialize)]
pub struct CuDefaults {
    pub device: String,
    pub cu: String,
    #[serde(default)]
    pub kernel: String,
    #[serde(default)]
    pub scalars: BTreeMap<String, u64>,
    #[serde(default)]
    pub memory: BTreeMap<String, String>,
}

impl Topology {
    pub fn read(path: &Path) -> Result<Topology> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("--topology {}", path.display()))?;
        let mut t: Topology = serde_json::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "--topology {}:{}: {e} (write it with the deploy tool)",
                path.display(),
                e.line()
            )
        })?;
        t.path = path.to_path_buf();
        Ok(t)
    }

    /// The device rank `rank` runs.
    pub fn device_of_rank(&self, rank: i32) -> Result<String> {
        self.devices
            .iter()
            .find(|d| d.rank == rank as i64)
            .map(|d| d.name.clone())
            .with_context(|| {
                format!(
                    "--topology {}: no device for rank {rank} in \"devices\"",
                    self.path.display()
                )
            })
    }

    /// The description's entry of CU `cu` on `device`, if it has one.
    pub fn cu(&self, device: &str, cu: &str) -> Option<&CuDefaults> {
        self.cus.iter().find(|c| c.device == device && c.cu == cu)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cus_are_read_and_optional() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("topology.json");
        std::fs::write(
            &p,
            r#"{"format": "auroraforge-topology/1", "devices": [{"name": "fpga0", "rank": 0, "node": 0}],
                "cus": [{"device": "fpga0", "cu": "jacobi_0", "kernel": "jacobi",
                         "scalars": {"rows": 64}, "memory": {"grid_a": "HBM[0]"}}]}"#,
        )
        .unwrap();
        let t = Topology::read(&p).unwrap();
        assert_eq!(t.device_of_rank(0).unwrap(), "fpga0");
        let c = t.cu("fpga0", "jacobi_0").unwrap();
        assert_eq!(c.scalars["rows"], 64);
        assert_eq!(c.memory["grid_a"], "HBM[0]");
        assert!(t
            .device_of_rank(1)
            .unwrap_err()
            .to_string()
            .contains("rank 1"));

        std::fs::write(&p, r#"{"devices": [{"name": "fpga0", "rank": 0}]}"#).unwrap();
        assert!(Topology::read(&p).unwrap().cus.is_empty());
        std::fs::write(&p, "{\n\"devices\": 3}").unwrap();
        let e = Topology::read(&p).unwrap_err().to_string();
        assert!(e.contains("topology.json:2:"), "{e}");
    }
}
