//! SIGTERM and SIGINT: how Slurm ends a job's tasks (at `scancel` or the time limit, SIGTERM
//! then SIGKILL after KillWait). The handler only sets a flag; the session sees it, tells
//! BuildGrid this bot is going (so no new lease is assigned to it) and hands back the lease
//! it was running, which BuildGrid then gives to another bot.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::SeqCst);
}

pub fn install() {
    for sig in [libc::SIGTERM, libc::SIGINT] {
        // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
        unsafe { libc::signal(sig, on_signal as *const () as libc::sighandler_t) };
    }
}

pub fn requested() -> bool {
    STOP.load(Ordering::SeqCst)
}

/// Resolves once a stop is requested (checked every 50 ms).
pub async fn wait() {
    while !requested() {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
