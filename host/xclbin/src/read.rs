//! Reading a sim container back: the description and the payloads by name.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result};

use crate::archive::{self, ArchiveEntry};
use sha2::{Digest, Sha256};

use crate::axlf::{SectionKind, Xclbin, SECTION_NAME_LEN};
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

/// The EMULATION_DATA section that holds payload `name`: the name itself when it fits
/// `m_sectionName` (15 bytes), else `~` and the first 14 hex digits of its SHA-256 (a replica
/// segment's kernel, `finn_<first layer>__<last layer>`, is longer). The packer and the
/// reader both name sections through this function.
pub fn section_name(name: &str) -> String {
    if !name.is_empty() && name.len() < SECTION_NAME_LEN {
        return name.to_string();
    }
    let digest = Sha256::digest(name.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("~{}", &hex[..SECTION_NAME_LEN - 2])
}

impl SimXclbin {
    /// The raw bytes of payload `name` (its section, `section_name`).
    pub fn payload_bytes(&self, name: &str) -> Result<&[u8]> {
        let section = section_name(name);
        self.payloads
            .get(&section)
            .map(Vec::as_slice)
            .with_context(|| {
                format!("the xclbin has no EMULATION_DATA section '{section}' (payload {name})")
            })
    }

    pub fn payload(&self, name: &str) -> Result<Payload> {
        let bytes = self.payload_bytes(name)?;
        if archive::is_archive(bytes) {
            Ok(Payload::Dir(archive::unpack(bytes)?))
        } else {
            Ok(Payload::File(bytes.to_vec()))
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

#[cfg(test)]
mod tests {
    use super::section_name;

    #[test]
    fn names_that_fit_stay_and_longer_ones_become_their_digest() {
        assert_eq!(section_name("finn_whole"), "finn_whole");
        assert_eq!(section_name("0123456789abcde"), "0123456789abcde");
        // `printf %s finn_FMPadding_rtl_0__FMPadding_rtl_3 | sha256sum` (GNU coreutils 9.1)
        // begins c260219ba52052
        let long = section_name("finn_FMPadding_rtl_0__FMPadding_rtl_3");
        assert_eq!(long, "~c260219ba52052");
        assert_eq!(long.len(), 15, "fits m_sectionName with its NUL");
        assert_ne!(
            section_name("finn_ConvolutionInputGenerator_rtl_3__LabelSelect_hls_0"),
            long
        );
    }
}
