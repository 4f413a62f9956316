//! The lines a rank writes for the launcher (`launch`), which reads mpirun's merged stderr:
//! its done line (with its CPU time), its errors and its progress (`progress`).

use std::io::Write;

/// `aurora-host: done rank R cpu S`: the rank finished its command, using S s of CPU.
pub const DONE: &str = "aurora-host: done rank ";
/// `aurora-host: rank R: error: ...`.
pub const ERROR: &str = "aurora-host: rank ";

/// Writes one whole line to stderr in a single write: mpirun merges the ranks' output, and
/// a line written in pieces can interleave with another rank's.
pub fn stderr_line(line: &str) {
    let mut bytes = line.as_bytes().to_vec();
    bytes.push(b'\n');
    let _ = std::io::stderr().lock().write_all(&bytes);
}

/// The done line of `rank`.
pub fn done(rank: i32) {
    stderr_line(&format!("{DONE}{rank} cpu {:.3}", cpu_seconds()));
}

/// User + system CPU seconds of this process, every thread (getrusage RUSAGE_SELF).
pub fn cpu_seconds() -> f64 {
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } != 0 {
        return 0.0;
    }
    let secs = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    secs(u.ru_utime) + secs(u.ru_stime)
}
