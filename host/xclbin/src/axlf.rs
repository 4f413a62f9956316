//! Byte layout of `struct axlf` and `struct axlf_section_header` (XRT `xclbin.h`).
//!
//! File = 456-byte fixed header (magic, signature, key block, unique id, `axlf_header`),
//! then `m_numSections` 40-byte section headers, then the section bodies at the offsets
//! the headers name.

use thiserror::Error;

pub const MAGIC: &[u8; 8] = b"xclbin2\0";
/// Offset of `m_header` inside `struct axlf`.
pub const HEADER_OFFSET: usize = 8 + 4 + 28 + 256 + 8;
/// `sizeof(struct axlf) - sizeof(struct axlf_section_header)`: where section headers start.
pub const SECTION_HEADERS_OFFSET: usize = HEADER_OFFSET + 152;
pub const SECTION_HEADER_SIZE: usize = 40;
pub const SECTION_NAME_LEN: usize = 16;
pub const PLATFORM_VBNV_LEN: usize = 64;
/// XCLBIN_MODE `XCLBIN_HW_EMU` would make XRT look for an emulation driver; the sim
/// containers carry no bitstream, so they declare `XCLBIN_FLAT` (0), as a plain link does.
pub const XCLBIN_FLAT: u16 = 0;

/// `enum axlf_section_kind` values used here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SectionKind {
    Bitstream,
    EmbeddedMetadata,
    MemTopology,
    Connectivity,
    IpLayout,
    ClockFreqTopology,
    UserMetadata,
    EmulationData,
    Other(u32),
}

impl SectionKind {
    pub fn code(self) -> u32 {
        match self {
            SectionKind::Bitstream => 0,
            SectionKind::EmbeddedMetadata => 2,
            SectionKind::MemTopology => 6,
            SectionKind::Connectivity => 7,
            SectionKind::IpLayout => 8,
            SectionKind::ClockFreqTopology => 11,
            SectionKind::UserMetadata => 16,
            SectionKind::EmulationData => 21,
            SectionKind::Other(code) => code,
        }
    }

    pub fn from_code(code: u32) -> SectionKind {
        match code {
            0 => SectionKind::Bitstream,
            2 => SectionKind::EmbeddedMetadata,
            6 => SectionKind::MemTopology,
            7 => SectionKind::Connectivity,
            8 => SectionKind::IpLayout,
            11 => SectionKind::ClockFreqTopology,
            16 => SectionKind::UserMetadata,
            21 => SectionKind::EmulationData,
            other => SectionKind::Other(other),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XclbinSection {
    pub kind: SectionKind,
    /// `m_sectionName`, at most 15 bytes (NUL-terminated in 16).
    pub name: String,
    pub data: Vec<u8>,
}

/// An xclbin in memory: the header fields XRT reads and the sections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Xclbin {
    pub platform_vbnv: String,
    pub uuid: [u8; 16],
    pub timestamp: u64,
    pub sections: Vec<XclbinSection>,
}

#[derive(Debug, Error)]
pub enum AxlfError {
    #[error("{0}: not an xclbin (magic is not \"xclbin2\")")]
    BadMagic(String),
    #[error("{path}: truncated: {what} needs bytes {start}..{end}, file has {len}")]
    Truncated {
        path: String,
        what: String,
        start: u64,
        end: u64,
        len: u64,
    },
    #[error("{0}")]
    Invalid(String),
}

impl Xclbin {
    pub fn sections_of(&self, kind: SectionKind) -> impl Iterator<Item = &XclbinSection> {
        self.sections.iter().filter(move |s| s.kind == kind)
    }

    pub fn section(&self, kind: SectionKind) -> Option<&XclbinSection> {
        self.sections_of(kind).next()
    }

    /// Serialises the container. Section bodies are 8-byte aligned because XRT casts them
    /// to structs holding `uint64_t`s.
    pub fn to_bytes(&self) -> Result<Vec<u8>, AxlfError> {
        if self.platform_vbnv.len() >= PLATFORM_VBNV_LEN {
            return Err(AxlfError::Invalid(format!(
                "platform name '{}' is longer than {} bytes (axlf_header.m_platformVBNV)",
                self.platform_vbnv,
                PLATFORM_VBNV_LEN - 1
            )));
        }
        let headers_end = SECTION_HEADERS_OFFSET + SECTION_HEADER_SIZE * self.sections.len();
        let mut out = vec![0u8; align8(headers_end)];
        out[0..8].copy_from_slice(MAGIC);
        out[8..12].copy_from_slice(&(-1i32).to_le_bytes()); // m_signature_length: unsigned
        out[12..40].fill(0xff); // reserved, "initialized to 0xFFs"
        out[40..296].fill(0xff); // m_keyBlock
        out[296..304]
            .copy_from_slice(&u64::from_le_bytes(self.uuid[..8].try_into().unwrap()).to_le_bytes());
        let mut section_offsets = Vec::with_capacity(self.sections.len());
        for section in &self.sections {
            if section.name.len() >= SECTION_NAME_LEN {
                return Err(AxlfError::Invalid(format!(
                    "section name '{}' is longer than {} bytes (m_sectionName)",
                    section.name,
                    SECTION_NAME_LEN - 1
                )));
            }
            let offset = out.len();
            out.extend_from_slice(&section.data);
            out.resize(align8(out.len()), 0);
            section_offsets.push(offset as u64);
        }
        let total = out.len() as u64;
        let h = HEADER_OFFSET;
        out[h..h + 8].copy_from_slice(&total.to_le_bytes()); // m_length
        out[h + 8..h + 16].copy_from_slice(&self.timestamp.to_le_bytes());
        // m_featureRomTimeStamp = 0; version 2.13.0 (the XRT release these follow)
        out[h + 24..h + 26].copy_from_slice(&0u16.to_le_bytes());
        out[h + 26] = 2;
        out[h + 27] = 13;
        out[h + 28..h + 30].copy_from_slice(&XCLBIN_FLAT.to_le_bytes());
        // m_actionMask 0, rom uuid zero
        out[h + 48..h + 48 + self.platform_vbnv.len()]
            .copy_from_slice(self.platform_vbnv.as_bytes());
        out[h + 112..h + 128].copy_from_slice(&self.uuid);
        out[h + 144..h + 148].copy_from_slice(&(self.sections.len() as u32).to_le_bytes());
        for (i, (section, offset)) in self.sections.iter().zip(section_offsets).enumerate() {
            let s = SECTION_HEADERS_OFFSET + i * SECTION_HEADER_SIZE;
            out[s..s + 4].copy_from_slice(&section.kind.code().to_le_bytes());
            out[s + 4..s + 4 + section.name.len()].copy_from_slice(section.name.as_bytes());
            out[s + 24..s + 32].copy_from_slice(&offset.to_le_bytes());
            out[s + 32..s + 40].copy_from_slice(&(section.data.len() as u64).to_le_bytes());
        }
        Ok(out)
    }

    /// Parses a container; `path` only names the file in errors.
    pub fn from_bytes(path: &str, bytes: &[u8]) -> Result<Xclbin, AxlfError> {
        let need = |what: &str, start: usize, end: usize| -> Result<(), AxlfError> {
            if end > bytes.len() {
                Err(AxlfError::Truncated {
                    path: path.to_string(),
                    what: what.to_string(),
                    start: start as u64,
                    end: end as u64,
                    len: bytes.len() as u64,
                })
            } else {
                Ok(())
            }
        };
        need("the axlf header", 0, SECTION_HEADERS_OFFSET)?;
        if &bytes[0..8] != MAGIC {
            return Err(AxlfError::BadMagic(path.to_string()));
        }
        let h = HEADER_OFFSET;
        let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap());
        let u32_at = |o: usize| u32::from_le_bytes(bytes[o..o + 4].try_into().unwrap());
        let length = u64_at(h);
        if length != bytes.len() as u64 {
            return Err(AxlfError::Invalid(format!(
                "{path}: header says {length} bytes, file has {} (truncated or padded copy?)",
                bytes.len()
            )));
        }
        let timestamp = u64_at(h + 8);
        let platform_vbnv = c_string(&bytes[h + 48..h + 112]);
        let mut uuid = [0u8; 16];
        uuid.copy_from_slice(&bytes[h + 112..h + 128]);
        let count = u32_at(h + 144) as usize;
        need(
            "the section headers",
            SECTION_HEADERS_OFFSET,
            SECTION_HEADERS_OFFSET + count * SECTION_HEADER_SIZE,
        )?;
        let mut sections = Vec::with_capacity(count);
        for i in 0..count {
            let s = SECTION_HEADERS_OFFSET + i * SECTION_HEADER_SIZE;
            let kind = SectionKind::from_code(u32_at(s));
            let name = c_string(&bytes[s + 4..s + 20]);
            let offset = u64_at(s + 24) as usize;
            let size = u64_at(s + 32) as usize;
            need(
                &format!("section {i} '{name}'"),
                offset,
                offset.saturating_add(size),
            )?;
            sections.push(XclbinSection {
                kind,
                name,
                data: bytes[offset..offset + size].to_vec(),
            });
        }
        Ok(Xclbin {
            platform_vbnv,
            uuid,
            timestamp,
            sections,
        })
    }
}

fn align8(n: usize) -> usize {
    (n + 7) & !7
}

/// A NUL-terminated fixed-size char array as a string.
pub fn c_string(field: &[u8]) -> String {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    String::from_utf8_lossy(&field[..end]).into_owned()
}
