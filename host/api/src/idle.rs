//! Waiting on MPI without spinning. A simulated rank is a dozen threads (link receivers and
//! senders, pumps, kernels) beside its MPI calls; Open MPI's blocking calls poll in a loop
//! (with `mpi_yield_when_idle` they `sched_yield` between polls, which still takes a core
//! whenever nothing else runs at that instant), so on a machine with fewer cores than ranks
//! the ranks waiting in a barrier starve the ones doing the work. Every wait here tests its
//! request and sleeps between tests, longer the longer nothing happens.

use std::time::Duration;

use mpi::collective::CommunicatorCollectives;
use mpi::request::{Request, Scope};
use mpi::topology::SimpleCommunicator;

/// The first pause after a test that found nothing, and the longest.
const FIRST: Duration = Duration::from_micros(50);
const LONGEST: Duration = Duration::from_millis(2);

/// Pauses that double while nothing happens, from 50 µs to 2 ms; `reset` after progress.
pub struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { next: FIRST }
    }
}

impl Backoff {
    pub fn pause(&mut self) {
        std::thread::sleep(self.next);
        self.next = (self.next * 2).min(LONGEST);
    }

    pub fn reset(&mut self) {
        self.next = FIRST;
    }
}

/// Tests `req` until it completes, pausing between tests.
pub fn complete<'a, D: ?Sized, S: Scope<'a>>(mut req: Request<'a, D, S>) {
    let mut backoff = Backoff::default();
    loop {
        match req.test() {
            Ok(_) => return,
            Err(r) => req = r,
        }
        backoff.pause();
    }
}

/// MPI_Barrier, waited for with pauses (MPI_Ibarrier + MPI_Test).
pub fn barrier(world: &SimpleCommunicator) {
    complete(world.immediate_barrier());
}
