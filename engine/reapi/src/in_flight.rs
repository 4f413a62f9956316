//! The remote operations this process is following, so that a build that gives up on them
//! cancels them (`google.longrunning.Operations.CancelOperation`) instead of leaving them
//! queued or running for nobody: forge interrupted by a signal ([`cancel_in_flight`], called
//! by forge_exec's signal handling) cancels every operation it still follows.
//!
//! An operation is known here from the moment the engine names it until its build stops
//! following it. Once [`cancel_in_flight`] has started, no new operation is submitted
//! ([`stopping`]): one submitted in the gap could not be cancelled any more.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use bazel_remote_apis::google::longrunning::CancelOperationRequest;

use crate::transport::Engine;

struct Entry {
    id: u64,
    name: String,
    engine: Engine,
}

static ENTRIES: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
/// The number of entries, readable from a signal handler (a lock is not).
static COUNT: AtomicUsize = AtomicUsize::new(0);
static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static STOPPING: AtomicBool = AtomicBool::new(false);

/// How many operations this process follows now; async-signal-safe (one atomic load).
pub fn in_flight_count() -> usize {
    COUNT.load(Ordering::SeqCst)
}

/// True once [`cancel_in_flight`] has started: the process is going away.
pub fn stopping() -> bool {
    STOPPING.load(Ordering::SeqCst)
}

/// One followed operation; dropping it (the build got its result, or gave up and cancelled
/// it itself) forgets it.
pub(crate) struct Registered {
    id: u64,
}

impl Registered {
    pub(crate) fn register(engine: &Engine, name: &str) -> Registered {
        let id = NEXT_ID.fetch_add(1, Ordering::SeqCst);
        let mut entries = ENTRIES.lock().unwrap_or_else(|e| e.into_inner());
        entries.push(Entry {
            id,
            name: name.to_owned(),
            engine: engine.clone(),
        });
        COUNT.store(entries.len(), Ordering::SeqCst);
        Registered { id }
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        let mut entries = ENTRIES.lock().unwrap_or_else(|e| e.into_inner());
        entries.retain(|e| e.id != self.id);
        COUNT.store(entries.len(), Ordering::SeqCst);
    }
}

/// Sends `CancelOperation` for `name`, waiting at most `timeout`; whether the engine
/// accepted it. Best effort: an engine that cannot be reached keeps the operation.
pub(crate) async fn cancel(engine: &Engine, name: &str, timeout: Duration) -> bool {
    if name.is_empty() {
        return false;
    }
    let mut ops = engine.operations.clone();
    let request = CancelOperationRequest {
        name: name.to_owned(),
    };
    matches!(
        tokio::time::timeout(timeout, ops.cancel_operation(request)).await,
        Ok(Ok(_))
    )
}

/// Cancels every operation this process follows, all at once, each call waiting at most
/// `timeout`; from then on no new operation is submitted. Returns the names the engine
/// accepted and those it did not. Blocks; call it from a thread outside any runtime.
pub fn cancel_in_flight(timeout: Duration) -> (Vec<String>, Vec<String>) {
    STOPPING.store(true, Ordering::SeqCst);
    let targets: Vec<(String, Engine)> = ENTRIES
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .map(|e| (e.name.clone(), e.engine.clone()))
        .collect();
    if targets.is_empty() {
        return (Vec::new(), Vec::new());
    }
    let Ok(rt) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return (Vec::new(), targets.into_iter().map(|(n, _)| n).collect());
    };
    let results = rt.block_on(async {
        // One task each, so the calls run together and the whole takes one `timeout`.
        let tasks: Vec<_> = targets
            .iter()
            .map(|(name, engine)| {
                let (name, engine) = (name.clone(), engine.clone());
                tokio::spawn(async move { cancel(&engine, &name, timeout).await })
            })
            .collect();
        let mut results = Vec::with_capacity(tasks.len());
        for t in tasks {
            results.push(t.await.unwrap_or(false));
        }
        results
    });
    let (mut done, mut failed) = (Vec::new(), Vec::new());
    for ((name, _), ok) in targets.into_iter().zip(results) {
        if ok {
            done.push(name);
        } else {
            failed.push(name);
        }
    }
    (done, failed)
}
