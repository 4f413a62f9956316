//! Remote operations of an interrupted build are cancelled before forge exits. A signal
//! handler may make no gRPC call, so when operations are in flight the handler (in `procs`)
//! only wakes [`start`]'s thread through a pipe and returns; that thread asks the engine to
//! cancel every operation this process follows (`forge_reapi::cancel_in_flight`, bounded by
//! [`CANCEL_TIMEOUT`]), says which, and then ends forge by the same signal, as the handler
//! does when nothing is in flight. The build's threads meanwhile wait: the REAPI client stops
//! following operations once cancelling has begun, so the build cannot finish first and exit
//! with another status. A second signal ends forge at once.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::time::Duration;

/// How long the engine gets to accept the cancellations.
const CANCEL_TIMEOUT: Duration = Duration::from_secs(5);

/// The pipe's write end (-1 until [`start`]).
static WAKE: AtomicI32 = AtomicI32::new(-1);
static CANCELLING: AtomicBool = AtomicBool::new(false);

/// Called by the signal handler after it killed the local process groups: `true` when the
/// canceller thread took over (the handler returns), `false` when the handler ends forge
/// itself (nothing remote in flight, no thread, or a second signal). Async-signal-safe.
pub(crate) fn hand_over(sig: libc::c_int) -> bool {
    let wake = WAKE.load(Ordering::SeqCst);
    if wake < 0 || forge_reapi::in_flight_count() == 0 || CANCELLING.swap(true, Ordering::SeqCst) {
        return false;
    }
    let byte = sig as u8;
    // SAFETY: write is async-signal-safe; one byte into our own pipe.
    unsafe { libc::write(wake, (&byte as *const u8).cast(), 1) == 1 }
}

/// Starts the canceller thread (once, with the signal handlers).
pub(crate) fn start() {
    if WAKE.load(Ordering::SeqCst) >= 0 {
        return;
    }
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two descriptors we own from here on.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return;
    }
    let read_fd = fds[0];
    let spawned = std::thread::Builder::new()
        .name("forge-remote-cancel".into())
        .spawn(move || {
            let sig = wait_for_signal(read_fd);
            let (cancelled, failed) = forge_reapi::cancel_in_flight(CANCEL_TIMEOUT);
            if !cancelled.is_empty() {
                eprintln!(
                    "forge: interrupted; cancelled the remote operations {}",
                    cancelled.join(", ")
                );
            }
            if !failed.is_empty() {
                eprintln!(
                    "forge: interrupted; the engine did not accept cancelling the remote \
                     operations {} (a worker may still run them)",
                    failed.join(", ")
                );
            }
            crate::procs::die_of(sig);
        });
    if spawned.is_ok() {
        WAKE.store(fds[1], Ordering::SeqCst);
    }
}

fn wait_for_signal(fd: libc::c_int) -> libc::c_int {
    let mut byte = 0u8;
    loop {
        // SAFETY: reads one byte into a local from our own pipe.
        let n = unsafe { libc::read(fd, (&mut byte as *mut u8).cast(), 1) };
        if n == 1 {
            return byte.into();
        }
        if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
            continue;
        }
        // The pipe broke: nothing will wake this thread; it must not end forge either.
        loop {
            std::thread::park();
        }
    }
}
