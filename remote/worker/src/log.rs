//! The worker's log lines on stderr, each stamped with the UTC time (RFC 3339, milliseconds):
//! an operator lines a lease up with BuildGrid's log and the client's build by it, and a
//! Slurm job's output file carries no times of its own.

/// `log!("lease {id}: running")` prints `2026-12-06T14:02:03.123Z forge-re-worker: lease …`.
macro_rules! log {
    ($($arg:tt)*) => {
        eprintln!(
            "{} forge-re-worker: {}",
            humantime::format_rfc3339_millis(std::time::SystemTime::now()),
            format_args!($($arg)*)
        )
    };
}

pub(crate) use log;
