//! Bodies of the binary sections XRT reads: MEM_TOPOLOGY, IP_LAYOUT, CONNECTIVITY,
//! CLOCK_FREQ_TOPOLOGY (structs of XRT `xclbin.h`; little-endian, C alignment).

use anyhow::{bail, Result};

use crate::axlf::c_string;
use crate::description::DeviceDescription;

/// `enum MEM_TYPE`.
const MEM_DDR4: u8 = 1;
const MEM_DRAM: u8 = 2;
const MEM_HBM: u8 = 6;
/// `enum IP_TYPE` IP_KERNEL.
pub const IP_KERNEL: u32 = 1;
/// `enum CLOCK_TYPE` CT_DATA.
const CT_DATA: u8 = 1;
/// Address window of one CU's AXI4-Lite map; CUs are placed one window apart.
pub const CU_WINDOW: u64 = 0x1_0000;
/// Base of the first CU (the U280 shell's user region starts its kernels here).
pub const CU_BASE: u64 = 0x80_0000;

/// One memory bank as XRT describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemBank {
    pub mem_type: u8,
    pub size_kb: u64,
    pub base: u64,
    pub tag: String,
}

/// XRT's memory type of a platform file's memory kind.
fn mem_type(kind: &str) -> Option<u8> {
    match kind {
        "HBM" => Some(MEM_HBM),
        "DDR" => Some(MEM_DDR4),
        "PLRAM" => Some(MEM_DRAM),
        _ => None,
    }
}

/// The bank `tag` (`HBM[i]`, `DDR[i]`, `PLRAM[i]`) on this board: it must have the bank,
/// whose size and base address are the board file's (`[bank_bytes]`, `[bank_base]`).
pub fn bank(tag: &str, board: &fpga_platform::Platform) -> Result<MemBank> {
    let (kind, index) = tag
        .strip_suffix(']')
        .and_then(|t| t.split_once('['))
        .and_then(|(f, i)| i.parse::<u64>().ok().map(|i| (f, i)))
        .ok_or_else(|| {
            anyhow::anyhow!("memory bank '{tag}': expected HBM[i], DDR[i] or PLRAM[i]")
        })?;
    board
        .check_bank(tag)
        .map_err(|e| anyhow::anyhow!("memory bank: {e} ({})", board.source))?;
    let Some(mem_type) = mem_type(kind) else {
        bail!("memory bank '{tag}': XRT has no memory type for {kind} here (HBM, DDR, PLRAM)");
    };
    let (Some(bytes), Some(base)) = (board.bank_size(kind), board.bank_address(kind, index)) else {
        bail!("memory bank '{tag}': {} has no such bank", board.source);
    };
    Ok(MemBank {
        mem_type,
        size_kb: bytes / 1024,
        base,
        tag: tag.to_string(),
    })
}

/// The banks the description's memory connections use, in first-use order, on `board`.
pub fn banks_of(d: &DeviceDescription, board: &fpga_platform::Platform) -> Result<Vec<MemBank>> {
    let mut banks: Vec<MemBank> = Vec::new();
    for m in &d.memory {
        if !banks.iter().any(|b| b.tag == m.bank) {
            banks.push(bank(&m.bank, board)?);
        }
    }
    Ok(banks)
}

pub fn mem_topology(banks: &[MemBank]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(banks.len() as i32).to_le_bytes());
    out.extend_from_slice(&[0; 4]); // mem_data is 8-aligned
    for b in banks {
        out.push(b.mem_type);
        out.push(1); // m_used
        out.extend_from_slice(&[0; 6]);
        out.extend_from_slice(&b.size_kb.to_le_bytes());
        out.extend_from_slice(&b.base.to_le_bytes());
        out.extend_from_slice(&fixed::<16>(&b.tag));
    }
    out
}

/// `IP_CONTROL` code of a control protocol name.
pub fn ip_control(control: &str) -> Result<u32> {
    Ok(match control {
        "ap_ctrl_hs" => 0,
        "ap_ctrl_chain" => 1,
        "ap_ctrl_none" => 2,
        other => {
            bail!("control protocol '{other}': expected ap_ctrl_hs, ap_ctrl_chain or ap_ctrl_none")
        }
    })
}

/// One IP_KERNEL entry per CU, named `kernel:cu` as v++ names them, sorted by base address.
pub fn ip_layout(d: &DeviceDescription) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    out.extend_from_slice(&(d.kernels.len() as i32).to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    for (i, k) in d.kernels.iter().enumerate() {
        let name = format!("{}:{}", k.kernel, k.cu);
        if name.len() >= 64 {
            bail!(
                "device {}: CU name '{name}' is longer than 63 bytes (ip_data.m_name)",
                d.device
            );
        }
        let properties = ip_control(k.control())? << 8;
        out.extend_from_slice(&IP_KERNEL.to_le_bytes());
        out.extend_from_slice(&properties.to_le_bytes());
        out.extend_from_slice(&cu_base(i).to_le_bytes());
        out.extend_from_slice(&fixed::<64>(&name));
    }
    Ok(out)
}

pub fn cu_base(index: usize) -> u64 {
    CU_BASE + index as u64 * CU_WINDOW
}

/// `connection` entries: CU (ip_layout index) argument (the index XRT binds, of every
/// pointer argument reached through the memory entry's port) -> bank (mem_topology index).
pub fn connectivity(d: &DeviceDescription, banks: &[MemBank]) -> Result<Vec<u8>> {
    let mut entries: Vec<(i32, i32, i32)> = Vec::new();
    for m in &d.memory {
        let (ip_index, kernel) = d
            .kernels
            .iter()
            .enumerate()
            .find(|(_, k)| k.cu == m.cu)
            .ok_or_else(|| anyhow::anyhow!("memory entry names unknown CU '{}'", m.cu))?;
        if !kernel.ports.iter().any(|p| p.name == m.port) {
            bail!(
                "device {}: CU {} has no port '{}' (memory entry)",
                d.device,
                m.cu,
                m.port
            );
        }
        let bank = banks
            .iter()
            .position(|b| b.tag == m.bank)
            .expect("bank listed");
        for a in kernel
            .args()
            .iter()
            .filter(|a| a.kind == "memory" && a.port == m.port)
        {
            entries.push((a.index as i32, ip_index as i32, bank as i32));
        }
    }
    let mut out = Vec::new();
    out.extend_from_slice(&(entries.len() as i32).to_le_bytes());
    for (arg, ip, bank) in entries {
        out.extend_from_slice(&arg.to_le_bytes());
        out.extend_from_slice(&ip.to_le_bytes());
        out.extend_from_slice(&bank.to_le_bytes());
    }
    Ok(out)
}

pub fn clock_freq_topology(clock_mhz: f64) -> Result<Vec<u8>> {
    if !(1.0..=65535.0).contains(&clock_mhz) {
        bail!("clock_mhz {clock_mhz} does not fit clock_freq.m_freq_Mhz (1..65535)");
    }
    let mut out = Vec::new();
    out.extend_from_slice(&1i16.to_le_bytes());
    out.extend_from_slice(&(clock_mhz.round() as u16).to_le_bytes());
    out.push(CT_DATA);
    out.extend_from_slice(&[0; 5]);
    out.extend_from_slice(&fixed::<128>("DATA_CLK"));
    Ok(out)
}

/// Entries of an IP_LAYOUT body: (name, base address, control code).
pub fn parse_ip_layout(body: &[u8]) -> Result<Vec<(String, u64, u32)>> {
    let count = read_i32(body, 0)? as usize;
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let o = 8 + i * 80;
        if body.len() < o + 80 {
            bail!(
                "IP_LAYOUT: {count} entries declared, body has {} bytes",
                body.len()
            );
        }
        let props = u32::from_le_bytes(body[o + 4..o + 8].try_into().unwrap());
        let base = u64::from_le_bytes(body[o + 8..o + 16].try_into().unwrap());
        out.push((c_string(&body[o + 16..o + 80]), base, (props >> 8) & 0xff));
    }
    Ok(out)
}

/// Tags of a MEM_TOPOLOGY body with their size in KiB.
pub fn parse_mem_topology(body: &[u8]) -> Result<Vec<(String, u64)>> {
    let count = read_i32(body, 0)? as usize;
    let mut out = Vec::with_capacity(count);
    for i in 0..count {
        let o = 8 + i * 40;
        if body.len() < o + 40 {
            bail!(
                "MEM_TOPOLOGY: {count} entries declared, body has {} bytes",
                body.len()
            );
        }
        let size = u64::from_le_bytes(body[o + 8..o + 16].try_into().unwrap());
        out.push((c_string(&body[o + 24..o + 40]), size));
    }
    Ok(out)
}

fn read_i32(body: &[u8], o: usize) -> Result<i32> {
    if body.len() < o + 4 {
        bail!("section body of {} bytes has no count", body.len());
    }
    Ok(i32::from_le_bytes(body[o..o + 4].try_into().unwrap()))
}

fn fixed<const N: usize>(s: &str) -> [u8; N] {
    let mut out = [0u8; N];
    out[..s.len().min(N - 1)].copy_from_slice(&s.as_bytes()[..s.len().min(N - 1)]);
    out
}
