//! Bounded AXI-Stream FIFOs between simulated kernels: blocking push/pop with timeouts, so
//! backpressure reaches a producer as in hardware and no wait is unbounded.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::{bail, Result};

/// One AXI-Stream beat.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Beat {
    pub data: Vec<u8>,
    pub keep: u64,
    pub last: bool,
}

impl Beat {
    pub fn new(data: Vec<u8>) -> Beat {
        let keep = if data.len() >= 64 {
            u64::MAX
        } else {
            (1u64 << data.len()) - 1
        };
        Beat {
            data,
            keep,
            last: false,
        }
    }
}

struct State {
    queue: VecDeque<Beat>,
    /// The producer finished: pops drain what is left, then see the end.
    closed: bool,
    /// The run is torn down: every wait returns this error.
    failed: Option<String>,
}

pub struct StreamFifo {
    pub name: String,
    pub depth: usize,
    state: Mutex<State>,
    changed: Condvar,
}

impl StreamFifo {
    pub fn new(name: impl Into<String>, depth: usize) -> StreamFifo {
        StreamFifo {
            name: name.into(),
            depth: depth.max(1),
            state: Mutex::new(State {
                queue: VecDeque::new(),
                closed: false,
                failed: None,
            }),
            changed: Condvar::new(),
        }
    }

    pub fn push(&self, beat: Beat, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let mut s = self.state.lock().unwrap();
        loop {
            if let Some(e) = &s.failed {
                bail!("stream {}: {e}", self.name);
            }
            if s.queue.len() < self.depth {
                s.queue.push_back(beat);
                self.changed.notify_all();
                return Ok(());
            }
            let now = Instant::now();
            if now >= deadline {
                bail!(
                    "stream {}: full for {timeout:?}, its consumer does not read",
                    self.name
                );
            }
            s = self.changed.wait_timeout(s, deadline - now).unwrap().0;
        }
    }

    /// The next beat, or None once the producer closed the stream and it is drained.
    pub fn pop(&self, timeout: Duration) -> Result<Option<Beat>> {
        let deadline = Instant::now() + timeout;
        let mut s = self.state.lock().unwrap();
        loop {
            if let Some(e) = &s.failed {
                bail!("stream {}: {e}", self.name);
            }
            if let Some(b) = s.queue.pop_front() {
                self.changed.notify_all();
                return Ok(Some(b));
            }
            if s.closed {
                return Ok(None);
            }
            let now = Instant::now();
            if now >= deadline {
                bail!(
                    "stream {}: empty for {timeout:?}, its producer sends nothing",
                    self.name
                );
            }
            s = self.changed.wait_timeout(s, deadline - now).unwrap().0;
        }
    }

    pub fn close(&self) {
        self.state.lock().unwrap().closed = true;
        self.changed.notify_all();
    }

    pub fn fail(&self, why: &str) {
        self.state.lock().unwrap().failed = Some(why.to_string());
        self.changed.notify_all();
    }

    pub fn len(&self) -> usize {
        self.state.lock().unwrap().queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
