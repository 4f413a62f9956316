//! Building the sim container from a device description and its payloads.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use sha2::{Digest, Sha256};

use crate::archive;
use crate::axlf::{SectionKind, Xclbin, XclbinSection, SECTION_NAME_LEN};
use crate::description::DeviceDescription;
use crate::metadata_xml::embedded_metadata;
use crate::sections;

/// Everything `xclbin-pack` is given.
pub struct PackInput {
    pub description_path: PathBuf,
    pub payloads: Vec<(String, PathBuf)>,
    pub platform: String,
    /// The board's file (toolchains/fpga_platforms/<platform>.toml): its board id, part and
    /// banks.
    pub platform_desc: PathBuf,
}

/// Reads a payload: a file as is, a directory as an AFARCH1 archive.
fn read_payload(name: &str, path: &Path) -> Result<Vec<u8>> {
    let meta = fs::metadata(path)
        .with_context(|| format!("--payload {name}={}: cannot read it", path.display()))?;
    if meta.is_dir() {
        archive::pack_dir(path)
    } else {
        fs::read(path).with_context(|| format!("--payload {name}={}", path.display()))
    }
}

pub fn build(input: &PackInput) -> Result<Xclbin> {
    let origin = input.description_path.display().to_string();
    let text = fs::read_to_string(&input.description_path)
        .with_context(|| format!("--description {origin}: cannot read it"))?;
    let description = DeviceDescription::parse(&origin, &text)?;
    if description.platform != input.platform {
        bail!(
            "{origin}: device {} is described for platform '{}' but --platform is '{}'",
            description.device,
            description.platform,
            input.platform
        );
    }
    let mut payloads: BTreeMap<&str, Vec<u8>> = BTreeMap::new();
    for (name, path) in &input.payloads {
        if name.is_empty() || name.len() >= SECTION_NAME_LEN {
            bail!("--payload {name}=...: the name must be 1..15 bytes (axlf m_sectionName)");
        }
        if payloads.insert(name, read_payload(name, path)?).is_some() {
            bail!("--payload {name} given twice");
        }
    }
    // A payload not given by --payload is the kernel's `model` (a project-relative path,
    // as the build graph passes artifacts); a kernel without a model carries none.
    let mut from_models: Vec<(String, PathBuf)> = Vec::new();
    for k in &description.kernels {
        let Some(p) = &k.payload else { continue };
        if payloads.contains_key(p.as_str()) {
            continue;
        }
        let Some(model) = &k.model else { continue };
        let path = PathBuf::from(model);
        if !path.exists() {
            bail!(
                "{origin}: CU {} of device {} needs payload '{p}': its model '{model}' does not exist; build it or pass --payload {p}=PATH",
                k.cu,
                description.device
            );
        }
        match from_models.iter().find(|(n, _)| n == p) {
            Some((_, other)) if *other != path => bail!(
                "{origin}: payload '{p}' names two models, '{}' and '{model}'",
                other.display()
            ),
            Some(_) => {}
            None => from_models.push((p.clone(), path)),
        }
    }
    // a model's payload may be longer than a section name: `section_name` shortens it
    for (name, path) in &from_models {
        payloads.insert(name, read_payload(name, path)?);
    }
    for name in payloads.keys() {
        if !description
            .kernels
            .iter()
            .any(|k| k.payload.as_deref() == Some(*name))
        {
            bail!("--payload {name}: no kernel of {origin} names this payload");
        }
    }

    let board = fpga_platform::Platform::load(&input.platform_desc)?;
    if board.name != input.platform {
        bail!(
            "--platform-desc {}: the file is platform '{}' but --platform is '{}'",
            input.platform_desc.display(),
            board.name,
            input.platform
        );
    }
    let banks = sections::banks_of(&description, &board)?;
    // USER_METADATA holds the description exactly as given (validated above), so the reader
    // sees the deploy tool's bytes, not a re-serialisation of them.
    let user_metadata = text.clone().into_bytes();
    let mut sections = vec![
        XclbinSection {
            kind: SectionKind::MemTopology,
            name: String::new(),
            data: sections::mem_topology(&banks),
        },
        XclbinSection {
            kind: SectionKind::IpLayout,
            name: String::new(),
            data: sections::ip_layout(&description)?,
        },
        XclbinSection {
            kind: SectionKind::Connectivity,
            name: String::new(),
            data: sections::connectivity(&description, &banks)?,
        },
        XclbinSection {
            kind: SectionKind::ClockFreqTopology,
            name: String::new(),
            data: sections::clock_freq_topology(description.clock_mhz)?,
        },
        XclbinSection {
            kind: SectionKind::EmbeddedMetadata,
            name: String::new(),
            data: embedded_metadata(&description, &board).into_bytes(),
        },
        XclbinSection {
            kind: SectionKind::UserMetadata,
            name: "sim_device".to_string(),
            data: user_metadata,
        },
    ];
    for (name, data) in payloads {
        sections.push(XclbinSection {
            kind: SectionKind::EmulationData,
            name: crate::read::section_name(name),
            data,
        });
    }
    // The UUID identifies the content (same inputs, same UUID: the build stays reproducible).
    let mut hash = Sha256::new();
    for s in &sections {
        hash.update(s.kind.code().to_le_bytes());
        hash.update(s.name.as_bytes());
        hash.update((s.data.len() as u64).to_le_bytes());
        hash.update(&s.data);
    }
    let digest = hash.finalize();
    let mut uuid = [0u8; 16];
    uuid.copy_from_slice(&digest[..16]);
    Ok(Xclbin {
        platform_vbnv: input.platform.clone(),
        uuid,
        timestamp: 0,
        sections,
    })
}

/// Writes `bytes` to `out` atomically (temp file in the same directory, then rename).
pub fn write_atomic(out: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let dir = out
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("creating a temporary file in {}", dir.display()))?;
    tmp.write_all(bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(out)
        .with_context(|| format!("renaming into {}", out.display()))?;
    Ok(())
}
