//! The lazy scheduler: only the actions whose outputs are needed run, in parallel up to
//! `jobs` weight permits; workers take ready actions themselves and release dependents.
//! Riders (`forge test`'s tests) share the permits: each starts once the actions producing
//! its inputs have succeeded, as buck2 runs a test as soon as what it needs is built. Ready
//! actions start by critical path (ready_queue.rs); a ready rider goes before a leaf action.

use std::collections::{HashMap, VecDeque};
use std::fs;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Result};

use forge_core::{Action, ActionGraph, ActionId, ActionKind, ArtifactRef};

use super::local_run::WorkerState;
use super::ready_queue::{heights, ReadyQueue};
use super::{Build, Outcome};
use crate::build_log::{self, BuildLog};
use crate::failure::{action_title, ActionFailure, BuildFailed};
use crate::BuildReport;

/// Work that rides a build: rider `i` needs the actions `needs[i]` to have succeeded, then
/// `run(i)` runs it on one job permit and returns the text to print.
pub(crate) struct Riders<'r> {
    pub needs: Vec<Vec<ActionId>>,
    pub run: &'r (dyn Fn(usize) -> String + Sync),
}

/// One unit a worker takes: an action with its weight, or a rider.
enum Job {
    Action(ActionId, usize),
    Rider(usize),
}

/// Scheduler state shared by the workers.
#[derive(Default)]
struct Sched {
    ready: ReadyQueue,
    /// Action -> number of producers it still waits for.
    waiting: HashMap<ActionId, usize>,
    riders_ready: VecDeque<usize>,
    /// Rider -> number of actions it still waits for.
    riders_waiting: HashMap<usize, usize>,
    /// Free weight permits.
    free: usize,
    running: usize,
    /// Riders running (each holds one permit).
    riders_running: usize,
    failures: Vec<ActionFailure>,
    report: BuildReport,
}

impl Sched {
    /// Nothing runs and nothing more will start (all done, or stopped by a failure).
    fn finished(&self) -> bool {
        self.running == 0
            && ((self.ready.is_empty() && self.riders_ready.is_empty())
                || !self.failures.is_empty())
    }

    /// The next job that may start now. A ready action that other actions wait for goes
    /// first (it releases more work), then a ready rider, then a leaf action (height 1: only
    /// riders or the requested outputs wait for it). The job chosen, when it needs more
    /// permits than are free, holds the queues until they are: nothing overtakes it, so
    /// cargo's all-permit actions do not starve. An action's weight counts only the permits
    /// riders do not hold, so a heavy action waits for the actions running, not for a long
    /// test to end while a slot idles.
    fn next_job(&self, graph: &ActionGraph, jobs: usize) -> Option<Job> {
        if !self.failures.is_empty() {
            return None;
        }
        let rider = self.riders_ready.front().copied();
        match self.ready.peek() {
            Some((id, height)) if height > 1 || rider.is_none() => {
                let w = weight(&graph.actions[id.0], jobs)
                    .min(jobs - self.riders_running)
                    .max(1);
                (w <= self.free).then_some(Job::Action(id, w))
            }
            _ => rider.filter(|_| self.free >= 1).map(Job::Rider),
        }
    }
}

/// Who waits for each action: the actions that need its outputs, and the riders.
struct Dependents {
    actions: HashMap<ActionId, Vec<ActionId>>,
    riders: HashMap<ActionId, Vec<usize>>,
}

/// The action producing `path`, which may lie inside a declared output directory.
pub(crate) fn producer_for(graph: &ActionGraph, path: &str) -> Option<ActionId> {
    let mut p = path;
    loop {
        if let Some(id) = graph.producers.get(p) {
            return Some(*id);
        }
        p = &p[..p.rfind('/')?];
    }
}

/// The actions needed for `wanted`, with each one's producers of inputs.
pub(super) fn needed_actions(
    graph: &ActionGraph,
    root: &Path,
    wanted: &[ArtifactRef],
) -> Result<HashMap<ActionId, Vec<ActionId>>> {
    let mut deps: HashMap<ActionId, Vec<ActionId>> = HashMap::new();
    let mut stack = Vec::new();
    for w in wanted {
        match w {
            ArtifactRef::Source(p) => {
                if fs::metadata(root.join(p)).is_err() {
                    bail!("Missing source: `{p}` does not exist");
                }
            }
            ArtifactRef::Build(p) => stack.push(
                producer_for(graph, p)
                    .ok_or_else(|| anyhow!("no action produces the requested output `{p}`"))?,
            ),
        }
    }
    while let Some(id) = stack.pop() {
        if deps.contains_key(&id) {
            continue;
        }
        let action = graph
            .actions
            .get(id.0)
            .ok_or_else(|| anyhow!("the action graph names unknown action {}", id.0))?;
        let mut mine = Vec::new();
        for input in &action.inputs {
            if let ArtifactRef::Build(p) = input {
                let producer = producer_for(graph, p).ok_or_else(|| {
                    anyhow!(
                        "Action failed: {}\nno action produces its input `{p}`",
                        action_title(action)
                    )
                })?;
                if producer != id && !mine.contains(&producer) {
                    mine.push(producer);
                    stack.push(producer);
                }
            }
        }
        deps.insert(id, mine);
    }
    Ok(deps)
}

fn weight(action: &Action, jobs: usize) -> usize {
    match &action.kind {
        ActionKind::Run { weight, .. } => (*weight as usize).clamp(1, jobs),
        _ => 1,
    }
}

impl Build<'_> {
    /// Schedules and runs every needed action, and the riders as their needs are met;
    /// returns the per-executor counts. After a failed action nothing more starts, riders
    /// included: the caller learns which riders ran from its own `run`.
    pub fn run(
        &self,
        graph: &ActionGraph,
        wanted: &[ArtifactRef],
        riders: Option<&Riders>,
    ) -> Result<BuildReport> {
        let started = Instant::now();
        let started_unix_ms = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis())
            .unwrap_or(0);
        if self.layout.sandbox_dir().exists() {
            self.janitor.discard(&self.layout.sandbox_dir());
        }
        let deps = needed_actions(graph, &self.layout.root, wanted)?;
        let jobs = self.opts.jobs.max(1);
        let mut waiting: HashMap<ActionId, usize> = HashMap::new();
        let mut dependents: HashMap<ActionId, Vec<ActionId>> = HashMap::new();
        let mut ready = ReadyQueue::new(heights(&deps));
        let mut ids: Vec<&ActionId> = deps.keys().collect();
        ids.sort();
        for id in ids {
            let d = &deps[id];
            if d.is_empty() {
                ready.push(*id);
            } else {
                waiting.insert(*id, d.len());
            }
            for p in d {
                dependents.entry(*p).or_default().push(*id);
            }
        }
        let mut rider_deps: HashMap<ActionId, Vec<usize>> = HashMap::new();
        let mut riders_waiting: HashMap<usize, usize> = HashMap::new();
        let mut riders_ready: VecDeque<usize> = VecDeque::new();
        for (i, needs) in riders
            .map(|r| r.needs.as_slice())
            .unwrap_or_default()
            .iter()
            .enumerate()
        {
            let mut needs: Vec<ActionId> = needs
                .iter()
                .filter(|id| deps.contains_key(id))
                .copied()
                .collect();
            needs.sort();
            needs.dedup();
            if needs.is_empty() {
                riders_ready.push_back(i);
            } else {
                riders_waiting.insert(i, needs.len());
            }
            for id in needs {
                rider_deps.entry(id).or_default().push(i);
            }
        }
        let dependents = Dependents {
            actions: dependents,
            riders: rider_deps,
        };
        self.progress.set_total(deps.len());
        let mut state = Sched {
            ready,
            waiting,
            riders_ready,
            riders_waiting,
            free: jobs,
            running: 0,
            riders_running: 0,
            failures: Vec::new(),
            report: BuildReport {
                sandbox: self.sandbox.name().to_string(),
                ..BuildReport::default()
            },
        };
        if state.ready.is_empty() && !deps.is_empty() {
            bail!("the needed actions form a cycle");
        }
        let shared = (Mutex::new(std::mem::take(&mut state)), Condvar::new());
        // Workers pick ready actions themselves and release their dependents, so a chain of
        // up-to-date actions runs without a thread hand-off per action.
        std::thread::scope(|s| {
            for _ in 0..jobs {
                s.spawn(|| self.worker(graph, &dependents, riders, jobs, &shared));
            }
            let (lock, cvar) = &shared;
            let mut st = lock.lock().unwrap();
            while !st.finished() {
                st = cvar.wait_timeout(st, Duration::from_millis(200)).unwrap().0;
                drop(st);
                self.progress.tick();
                st = lock.lock().unwrap();
            }
        });
        self.progress.finish();
        let Sched {
            mut report,
            failures,
            waiting,
            ..
        } = shared.0.into_inner().unwrap();
        if failures.is_empty() && !waiting.is_empty() {
            let mut names: Vec<String> = waiting
                .keys()
                .map(|id| action_title(&graph.actions[id.0]))
                .collect();
            names.sort();
            bail!(
                "these actions depend on each other's outputs in a cycle: {}",
                names.join(", ")
            );
        }
        report.remote_errors = self.remote.errors.load(Ordering::Relaxed);
        if let Err(e) = self.digests.save() {
            self.progress
                .println(&format!("warning: could not save the digest cache: {e}"));
        }
        let mut actions = std::mem::take(&mut *self.records.lock().unwrap());
        actions.sort_by(|a, b| a.identity.cmp(&b.identity));
        report.not_shared = actions
            .iter()
            .filter(|a| a.executor == "local")
            .filter_map(|a| Some((a.name.clone(), a.not_shared.clone()?)))
            .collect();
        report.not_shared.sort();
        let log = BuildLog {
            build_id: self.build_id.to_string(),
            started_unix_ms,
            duration_ms: started.elapsed().as_millis() as u64,
            success: failures.is_empty(),
            sandbox: self.sandbox.name().to_string(),
            actions,
        };
        if let Err(e) = build_log::write(self.layout, log) {
            self.progress
                .println(&format!("warning: could not write the build log: {e:#}"));
        }
        if failures.is_empty() {
            Ok(report)
        } else {
            Err(anyhow::Error::new(BuildFailed { failures }))
        }
    }

    fn worker(
        &self,
        graph: &ActionGraph,
        dependents: &Dependents,
        riders: Option<&Riders>,
        jobs: usize,
        shared: &(Mutex<Sched>, Condvar),
    ) {
        let (lock, cvar) = shared;
        let mut slot = WorkerState::default();
        let mut st = lock.lock().unwrap();
        loop {
            if st.finished() {
                cvar.notify_all();
                drop(st);
                if let Some(s) = slot.reusable.take() {
                    self.janitor.discard(&s.dir);
                }
                // The thread's persistent sandboxes end here.
                drop(slot);
                return;
            }
            let (id, w) = match st.next_job(graph, jobs) {
                None => {
                    st = cvar.wait(st).unwrap();
                    continue;
                }
                Some(Job::Rider(rider)) => {
                    st.riders_ready.pop_front();
                    st.free -= 1;
                    st.running += 1;
                    st.riders_running += 1;
                    drop(st);
                    let run = riders.expect("a rider is queued only with riders").run;
                    let text = run(rider);
                    self.progress.println(&text);
                    st = lock.lock().unwrap();
                    st.free += 1;
                    st.running -= 1;
                    st.riders_running -= 1;
                    if !st.ready.is_empty() || !st.riders_ready.is_empty() || st.finished() {
                        cvar.notify_all();
                    }
                    continue;
                }
                Some(Job::Action(id, w)) => (id, w),
            };
            st.ready.pop();
            st.free -= w;
            st.running += 1;
            drop(st);
            let action = &graph.actions[id.0];
            self.progress.started(id.0, action_title(action));
            let result = self.process(action, &mut slot);
            match &result {
                Ok(outcome) => self.progress.finished(id.0, outcome.name()),
                Err(f) => {
                    self.progress.finished(id.0, "failed");
                    // Streamed as it happens, as buck2 does; returned as well.
                    if self.progress.mode() != crate::ConsoleMode::Quiet {
                        self.progress.println(&f.message);
                    }
                }
            }
            st = lock.lock().unwrap();
            st.free += w;
            st.running -= 1;
            match result {
                Ok(outcome) => {
                    let r = &mut st.report;
                    match outcome {
                        Outcome::Local => r.local += 1,
                        Outcome::Cache => r.cached += 1,
                        Outcome::Remote => r.remote += 1,
                        Outcome::RemoteExec => r.remote_executed += 1,
                        Outcome::InProcess => r.in_process += 1,
                        Outcome::UpToDate => r.up_to_date += 1,
                    }
                    for d in dependents.actions.get(&id).into_iter().flatten() {
                        let n = st.waiting.get_mut(d).expect("dependent is waiting");
                        *n -= 1;
                        if *n == 0 {
                            st.waiting.remove(d);
                            st.ready.push(*d);
                        }
                    }
                    for r in dependents.riders.get(&id).into_iter().flatten() {
                        let n = st.riders_waiting.get_mut(r).expect("rider is waiting");
                        *n -= 1;
                        if *n == 0 {
                            st.riders_waiting.remove(r);
                            st.riders_ready.push_back(*r);
                        }
                    }
                }
                Err(f) => st.failures.push(f),
            }
            // This worker takes the next ready action itself (it loops with the lock held);
            // the others only need waking when there is more than one to take. The end of
            // the build is announced by whichever worker sees `finished()` first.
            if st.ready.len() + st.riders_ready.len() > 1 {
                cvar.notify_all();
            }
        }
    }
}
