//! Reading a sim container back: the description and the payloads by name.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};

use crate::archive::{self, ArchiveEntry};
use crate::axlf::{SectionKind, Xclbin};
use crate::description::DeviceDescription;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Payload {
    File(Vec<u8>),
    Dir(Vec<ArchiveEntry>),
}

#[derive(Debug, Clone)]
pub struct SimXclbin {
    pub xclbin: Xclbin,
    pub description: DeviceDescription,
    /// USER_METADATA as JSON, every field the deploy tool wrote.
    pub description_json: serde_json::Value,
    /// EMULATION_DATA sections by `m_sectionName`, with their raw bytes.
    pub payloads: BTreeMap<String, Vec<u8>>,
}

impl SimXclbin {
    pub fn payload(&self, name: &str) -> Result<Payload> {
        let bytes = self
            .payloads
            .get(name)
            .with_context(|| format!("the xclbin has no EMULATION_DATA section '{name}'"))?;
        if archive::is_archive(bytes) {
            Ok(Payload::Dir(archive::unpack(bytes)?))
        } else {
            Ok(Payload::File(bytes.clone()))
        }
    }
}

pub fn read_xclbin(path: &Path) -> Result<SimXclbin> {
    let shown = path.display().to_string();
    let bytes = std::fs::read(path).with_context(|| format!("reading xclbin {shown}"))?;
    let xclbin = Xclbin::from_bytes(&shown, &bytes)?;
    let meta = xclbin.section(SectionKind::UserMetadata).with_context(|| {
        format!("{shown}: no USER_METADATA section: not a simulated-device xclbin (made by xclbin-pack)")
    })?;
    let text = std::str::from_utf8(&meta.data)
        .with_context(|| format!("{shown}: USER_METADATA is not UTF-8"))?;
    let description = DeviceDescription::parse(&format!("{shown} (USER_METADATA)"), text)?;
    let description_json = serde_json::from_str(text)?;
    let payloads = xclbin
        .sections_of(SectionKind::EmulationData)
        .map(|s| (s.name.clone(), s.data.clone()))
        .collect();
    Ok(SimXclbin {
        xclbin,
        description,
        description_json,
        payloads,
    })
}
