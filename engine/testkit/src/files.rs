//! Test files: large pseudo-random files, digests by an independent tool, memory use.

use std::io::Write;
use std::path::Path;
use std::process::Command;

/// A file of `size` pseudo-random bytes, written in chunks (never held whole in memory).
pub fn write_random_file(path: &Path, size: u64, seed: u64) {
    let mut f = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut buf = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        for b in buf.iter_mut() {
            // xorshift64: cheap, deterministic filler that does not compress.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
        let n = left.min(buf.len() as u64) as usize;
        f.write_all(&buf[..n]).unwrap();
        left -= n as u64;
    }
    f.flush().unwrap();
}

/// SHA-256 by an independent implementation (coreutils), to check our own digests.
pub fn sha256sum(path: &Path) -> String {
    let out = Command::new("sha256sum").arg(path).output().unwrap();
    assert!(out.status.success());
    String::from_utf8(out.stdout).unwrap()[..64].to_string()
}

/// Peak resident memory (VmHWM) of this process in KiB.
pub fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}
