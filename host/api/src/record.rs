//! `--record-calls DIR`: every buffer and kernel call the rank made on its device, one line
//! per call, to DIR/rank<r>.calls.

use std::path::Path;

use anyhow::{Context, Result};
use fpga_device::record::CallLog;

pub fn write(dir: &Path, rank: i32, log: &CallLog) -> Result<()> {
    let text: String = log
        .lock()
        .unwrap()
        .iter()
        .map(|l| format!("{l}\n"))
        .collect();
    std::fs::create_dir_all(dir).with_context(|| format!("--record-calls {}", dir.display()))?;
    write_atomic(&dir.join(format!("rank{rank}.calls")), &text)
}

/// Writes `path` whole or not at all (a temporary file beside it, renamed).
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("renaming into {}", path.display()))?;
    Ok(())
}
