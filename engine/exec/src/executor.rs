//! One build: the lazy scheduler (only actions whose outputs are needed, in parallel up to
//! `jobs` weight permits) and the per-action pipeline: key -> local action cache -> remote
//! cache -> execute (sandboxed command or in-process) -> store.

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};

use forge_core::{Action, ActionGraph, ActionId, ActionKind, ArtifactRef};

use crate::action_cache::{ActionCache, CachedResult, OutputRecord};
use crate::action_key::{describe, key_action, KeyedAction};
use crate::build_log::{self, ActionRecord, BuildLog};
use crate::cas::Cas;
use crate::digest::DigestCache;
use crate::failure::{
    action_title, command_line, failure, streams_block, ActionFailure, BuildFailed,
};
use crate::janitor::Janitor;
use crate::layout::{remove_any, replace_with, temp_sibling, Layout};
use crate::outputs;
use crate::progress::Progress;
use crate::remote::RemoteState;
use crate::sandbox::{Sandbox, SandboxKind, Sandboxes, FOREST_NOTICE, NETWORK_ENV, STRICT_ENV};
use crate::{in_process, BuildReport, ExecOptions};

/// Lines of stderr shown in an action failure (the full text goes to the log dir).
const STDERR_TAIL_LINES: usize = 60;

/// An anonymous file for one captured stream of an action: a memfd, so capturing costs no
/// directory entry to create and delete per action; an unlinked file beside the sandbox
/// where memfds are unavailable.
fn stream_file(sandbox: &Path, stream: &str) -> Result<fs::File> {
    let name = std::ffi::CString::new(format!("forge-{stream}")).expect("no NUL in the name");
    // SAFETY: memfd_create takes a valid C string and returns a new descriptor we own.
    let fd = unsafe { libc::memfd_create(name.as_ptr(), libc::MFD_CLOEXEC) };
    if fd >= 0 {
        use std::os::fd::FromRawFd;
        // SAFETY: `fd` is a fresh descriptor owned by nobody else.
        return Ok(unsafe { fs::File::from_raw_fd(fd) });
    }
    let path = sandbox.with_extension(stream);
    let file = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .with_context(|| format!("creating `{}`", path.display()))?;
    let _ = fs::remove_file(&path);
    Ok(file)
}

/// Size, modification time and inode of a file: what changes when it is written or replaced.
type Stamp = Option<(u64, i64, i64, u64)>;

fn file_stamp(path: &Path) -> Stamp {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(path)
        .ok()
        .map(|m| (m.len(), m.mtime(), m.mtime_nsec(), m.ino()))
}

/// Stamps of an action's file inputs, taken before it runs: in the symlink forest an action
/// can write through an input link, which the sandbox cannot prevent but forge can notice.
fn input_stamps(root: &Path, inputs: &[crate::digest::InputDigest]) -> Vec<(String, Stamp)> {
    inputs
        .iter()
        .filter(|i| !i.is_dir)
        .map(|i| (i.path.clone(), file_stamp(&root.join(&i.path))))
        .collect()
}

/// Everything written to a stream file.
fn read_stream(file: &mut fs::File) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(0)).is_ok() {
        let _ = file.read_to_end(&mut bytes);
    }
    bytes
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Outcome {
    UpToDate,
    Cache,
    Remote,
    Local,
    InProcess,
}

impl Outcome {
    fn name(self) -> &'static str {
        match self {
            Outcome::UpToDate => "up-to-date",
            Outcome::Cache => "cache",
            Outcome::Remote => "remote",
            Outcome::Local => "local",
            Outcome::InProcess => "in-process",
        }
    }
}

/// Scheduler state shared by the workers.
#[derive(Default)]
struct Sched {
    ready: VecDeque<ActionId>,
    /// Action -> number of producers it still waits for.
    waiting: HashMap<ActionId, usize>,
    /// Free weight permits.
    free: usize,
    running: usize,
    failures: Vec<ActionFailure>,
    report: BuildReport,
}

impl Sched {
    /// Nothing runs and nothing more will start (all done, or stopped by a failure).
    fn finished(&self) -> bool {
        self.running == 0 && (self.ready.is_empty() || !self.failures.is_empty())
    }
}

/// The emptied forest sandbox a worker keeps for its next action.
struct SandboxSlot {
    dir: PathBuf,
    /// The directories it holds (see `Sandbox::prepare`).
    dirs: BTreeSet<String>,
}

pub(crate) struct Build<'a> {
    pub layout: &'a Layout,
    pub opts: &'a ExecOptions,
    pub sandbox: &'a Sandboxes,
    pub build_id: &'a str,
    pub digests: DigestCache,
    pub cas: Cas,
    pub ac: ActionCache,
    pub remote: RemoteState,
    pub progress: Progress,
    sandbox_counter: AtomicUsize,
    forest_notice: AtomicBool,
    records: Mutex<Vec<ActionRecord>>,
    janitor: Janitor,
}

/// The action producing `path`, which may lie inside a declared output directory.
fn producer_for(graph: &ActionGraph, path: &str) -> Option<ActionId> {
    let mut p = path;
    loop {
        if let Some(id) = graph.producers.get(p) {
            return Some(*id);
        }
        p = &p[..p.rfind('/')?];
    }
}

/// The actions needed for `wanted`, with each one's producers of inputs.
fn needed_actions(
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

impl<'a> Build<'a> {
    pub fn new(
        layout: &'a Layout,
        opts: &'a ExecOptions,
        sandbox: &'a Sandboxes,
        build_id: &'a str,
        progress: Progress,
    ) -> Build<'a> {
        Build {
            layout,
            opts,
            sandbox,
            build_id,
            digests: DigestCache::load(layout.digest_cache()),
            cas: Cas::new(layout.cas_dir()),
            ac: ActionCache::new(layout.ac_dir()),
            remote: RemoteState::new(
                opts.remote.clone(),
                opts.remote_mode,
                opts.default_allow_cache_upload,
                opts.cache_policy,
            ),
            progress,
            sandbox_counter: AtomicUsize::new(0),
            forest_notice: AtomicBool::new(false),
            records: Mutex::new(Vec::new()),
            janitor: Janitor::start(layout.trash_dir()),
        }
    }

    /// Schedules and runs every needed action; returns the per-executor counts.
    pub fn run(&self, graph: &ActionGraph, wanted: &[ArtifactRef]) -> Result<BuildReport> {
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
        let mut ready: VecDeque<ActionId> = VecDeque::new();
        let mut ids: Vec<&ActionId> = deps.keys().collect();
        ids.sort();
        for id in ids {
            let d = &deps[id];
            if d.is_empty() {
                ready.push_back(*id);
            } else {
                waiting.insert(*id, d.len());
            }
            for p in d {
                dependents.entry(*p).or_default().push(*id);
            }
        }
        self.progress.set_total(deps.len());
        let mut state = Sched {
            ready,
            waiting,
            free: jobs,
            running: 0,
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
                s.spawn(|| self.worker(graph, &dependents, jobs, &shared));
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
        dependents: &HashMap<ActionId, Vec<ActionId>>,
        jobs: usize,
        shared: &(Mutex<Sched>, Condvar),
    ) {
        let (lock, cvar) = shared;
        let mut slot: Option<SandboxSlot> = None;
        let mut st = lock.lock().unwrap();
        loop {
            if st.finished() {
                cvar.notify_all();
                drop(st);
                if let Some(s) = slot {
                    self.janitor.discard(&s.dir);
                }
                return;
            }
            let next = match st.ready.front() {
                Some(&id) if st.failures.is_empty() => {
                    let w = weight(&graph.actions[id.0], jobs);
                    (w <= st.free).then_some((id, w))
                }
                _ => None,
            };
            let Some((id, w)) = next else {
                st = cvar.wait(st).unwrap();
                continue;
            };
            st.ready.pop_front();
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
                        Outcome::InProcess => r.in_process += 1,
                        Outcome::UpToDate => r.up_to_date += 1,
                    }
                    for d in dependents.get(&id).into_iter().flatten() {
                        let n = st.waiting.get_mut(d).expect("dependent is waiting");
                        *n -= 1;
                        if *n == 0 {
                            st.waiting.remove(d);
                            st.ready.push_back(*d);
                        }
                    }
                }
                Err(f) => st.failures.push(f),
            }
            // This worker takes the next ready action itself (it loops with the lock held);
            // the others only need waking when there is more than one to take. The end of
            // the build is announced by whichever worker sees `finished()` first.
            if st.ready.len() > 1 {
                cvar.notify_all();
            }
        }
    }

    fn process(
        &self,
        action: &Action,
        slot: &mut Option<SandboxSlot>,
    ) -> Result<Outcome, ActionFailure> {
        let start = Instant::now();
        let keyed = key_action(action, &self.layout.root, &self.digests)
            .map_err(|e| failure(action, &format!("{e:#}")))?;
        match self.process_keyed(action, &keyed, slot) {
            Ok(outcome) => {
                self.record(action, &keyed, outcome.name(), start.elapsed());
                Ok(outcome)
            }
            Err(e) => {
                self.record(action, &keyed, "failed", start.elapsed());
                Err(match e.downcast::<ActionFailure>() {
                    Ok(f) => f,
                    Err(e) => failure(action, &format!("{e:#}")),
                })
            }
        }
    }

    fn process_keyed(
        &self,
        action: &Action,
        keyed: &KeyedAction,
        slot: &mut Option<SandboxSlot>,
    ) -> Result<Outcome> {
        if let Some(cached) = self.ac.get(&keyed.key) {
            if self.outputs_match(&cached) {
                return Ok(Outcome::UpToDate);
            }
            if action.is_command() {
                if self.restore(&cached)? {
                    return Ok(Outcome::Cache);
                }
                self.progress.println(&format!(
                    "warning: the local cache entry of {} was corrupt (a stored file no longer matches its digest); it was dropped and the action runs again",
                    action_title(action)
                ));
                self.ac.remove(&keyed.key);
            }
        }
        let desc = describe(action, keyed);
        if let Some(desc) = &desc {
            if let Some(hit) =
                self.remote
                    .lookup(action, desc, &self.cas, &self.digests, &self.progress)
            {
                if self.restore(&hit)? {
                    self.ac.put(&keyed.key, &hit)?;
                    return Ok(Outcome::Remote);
                }
                self.remote.error(
                    &self.progress,
                    "download",
                    action,
                    &anyhow!("a blob does not match its digest; it was discarded"),
                );
            }
        }
        match &action.kind {
            ActionKind::Run { .. } => {
                let (stdout, stderr) = self.run_local(action, keyed, slot)?;
                if let Some(desc) = &desc {
                    self.remote
                        .upload(action, desc, self.layout, &stdout, &stderr, &self.progress);
                }
                Ok(Outcome::Local)
            }
            _ => {
                in_process::execute(action, &self.layout.root)?;
                let result = CachedResult {
                    outputs: self.capture_outputs(action)?,
                    stdout: None,
                    stderr: None,
                };
                self.ac.put(&keyed.key, &result)?;
                Ok(Outcome::InProcess)
            }
        }
    }

    fn outputs_match(&self, cached: &CachedResult) -> bool {
        cached
            .outputs
            .iter()
            .all(|o| outputs::matches(&self.layout.abs(&o.path), &o.node, &self.digests))
    }

    /// Restores outputs from the CAS; `false` (and the bad blobs dropped) when a blob is
    /// missing or corrupt.
    fn restore(&self, cached: &CachedResult) -> Result<bool> {
        let mut ok = true;
        for o in &cached.outputs {
            for hash in outputs::blobs(&o.node) {
                if !self.cas.verify(hash, &self.digests) {
                    self.cas.remove(hash, &self.digests);
                    ok = false;
                }
            }
        }
        if !ok {
            return Ok(false);
        }
        for o in &cached.outputs {
            let dst = self.layout.abs(&o.path);
            if outputs::matches(&dst, &o.node, &self.digests) {
                continue;
            }
            fs::create_dir_all(dst.parent().expect("output has a parent"))?;
            let tmp = temp_sibling(&dst);
            let placed = outputs::materialise(&o.node, &self.cas, &tmp)
                .and_then(|_| replace_with(&tmp, &dst).map_err(Into::into));
            if let Err(e) = placed {
                let _ = remove_any(&tmp);
                return Err(e.context(format!("restoring `{}`", o.path)));
            }
        }
        Ok(true)
    }

    fn capture_outputs(&self, action: &Action) -> Result<Vec<OutputRecord>> {
        action
            .outputs
            .iter()
            .map(|o| {
                let node = outputs::capture(&self.layout.abs(&o.path), &self.digests)
                    .with_context(|| format!("reading output `{}`", o.path))?;
                Ok(OutputRecord {
                    path: o.path.clone(),
                    node,
                })
            })
            .collect()
    }

    /// Runs a command in its sandbox, moves its outputs into place and caches them.
    fn run_local(
        &self,
        action: &Action,
        keyed: &KeyedAction,
        slot: &mut Option<SandboxSlot>,
    ) -> Result<(Vec<u8>, Vec<u8>)> {
        let ActionKind::Run {
            argv, env, scratch, ..
        } = &action.kind
        else {
            unreachable!("run_local is only called for run actions");
        };
        let strict = env.iter().any(|(k, v)| k == STRICT_ENV && v == "1");
        let (kind, weaker) = self.sandbox.for_action(strict);
        if weaker && !self.forest_notice.swap(true, Ordering::Relaxed) {
            self.progress.println(FOREST_NOTICE);
        }
        let root = &self.layout.root;
        // As buck2 does: stale outputs are gone before the action runs, so a failure never
        // leaves an old output looking current.
        for o in &action.outputs {
            let old = self.layout.abs(&o.path);
            if old.symlink_metadata().is_ok() {
                self.janitor.discard(&old);
            }
            if old.symlink_metadata().is_ok() {
                bail!("cannot remove the old output `{}`", o.path);
            }
        }
        // A forest sandbox the same worker emptied after its previous action is reused.
        let reused = match kind {
            SandboxKind::SymlinkForest => slot.take(),
            SandboxKind::Bubblewrap(_) => None,
        };
        let (dir, existing) = match reused {
            Some(s) => (s.dir, s.dirs),
            None => {
                let n = self.sandbox_counter.fetch_add(1, Ordering::Relaxed);
                let short_id = &self.build_id[..8];
                let dir = self.layout.sandbox_dir().join(format!("{short_id}-{n}"));
                (dir, BTreeSet::new())
            }
        };
        let inputs: Vec<String> = keyed.inputs.iter().map(|i| i.path.clone()).collect();
        let network = env.iter().any(|(k, v)| k == NETWORK_ENV && v == "1");
        let sandbox = Sandbox::new(
            kind,
            root,
            dir.clone(),
            &inputs,
            &action.outputs,
            scratch,
            &self.opts.sandbox_passthrough,
            network,
        );
        let dirs = match sandbox.prepare(existing, &self.janitor) {
            Ok(dirs) => dirs,
            Err(e) => {
                sandbox.remove(&self.janitor);
                return Err(e);
            }
        };
        let mut request_env = vec![("BUCK_SCRATCH_PATH".to_string(), scratch.clone())];
        request_env.extend(env.iter().cloned());
        let mut cmd = sandbox.command(argv, &request_env);
        cmd.env("BUCK_BUILD_ID", self.build_id);
        let mut out_file = stream_file(&dir, "stdout")?;
        let mut err_file = stream_file(&dir, "stderr")?;
        cmd.stdout(out_file.try_clone()?);
        cmd.stderr(err_file.try_clone()?);
        let line = command_line(&root.to_string_lossy(), &request_env, argv);
        let before = match kind {
            SandboxKind::SymlinkForest => input_stamps(root, &keyed.inputs),
            SandboxKind::Bubblewrap(_) => Vec::new(),
        };
        let status = cmd.status();
        // The spawned command's copies of the descriptors are closed once it has exited.
        drop(cmd);
        let stdout = read_stream(&mut out_file);
        let stderr = read_stream(&mut err_file);
        let fail = |reason: String| -> anyhow::Error {
            let log = self.keep_log(action, &line, &reason, &stdout, &stderr);
            let body = format!(
                "{reason}\nLocal command: {line}\n{}{log}",
                streams_block(&stdout, &stderr, STDERR_TAIL_LINES)
            );
            sandbox.remove(&self.janitor);
            anyhow::Error::new(failure(action, &body))
        };
        let status = match status {
            Ok(s) => s,
            Err(e) => {
                return Err(fail(format!(
                    "Local command could not be started: {e} (program `{}`)",
                    argv[0]
                )))
            }
        };
        if !status.success() {
            use std::os::unix::process::ExitStatusExt;
            let reason = match (status.code(), status.signal()) {
                (Some(c), _) => format!("Local command returned non-zero exit code {c}"),
                (None, Some(sig)) => format!("Local command was killed by signal {sig}"),
                _ => "Local command failed".to_string(),
            };
            return Err(fail(reason));
        }
        let missing: Vec<String> = action
            .outputs
            .iter()
            .filter(|o| sandbox.dir.join(&o.path).symlink_metadata().is_err())
            .map(|o| format!("`{}`", o.path))
            .collect();
        if !missing.is_empty() {
            return Err(fail(format!(
                "Required outputs are missing: Action failed to produce outputs: {}",
                missing.join(", ")
            )));
        }
        if let Some(changed) = before
            .iter()
            .find(|(rel, stamp)| file_stamp(&root.join(rel)) != *stamp)
        {
            return Err(fail(format!(
                "Input `{}` changed while the action ran: in the symlink-forest sandbox inputs are links to the real files, so a write to one reaches the project (write a declared output instead)",
                changed.0
            )));
        }
        let undeclared = sandbox.undeclared_writes();
        if !undeclared.is_empty() {
            let list: Vec<String> = undeclared.iter().map(|p| format!("`{p}`")).collect();
            return Err(fail(format!(
                "Action wrote undeclared paths: {} (only declared outputs and $BUCK_SCRATCH_PATH may be written; declare them with ctx.actions.declare_output)",
                list.join(", ")
            )));
        }
        for o in &action.outputs {
            replace_with(&sandbox.dir.join(&o.path), &self.layout.abs(&o.path))
                .with_context(|| format!("moving output `{}` into place", o.path))?;
        }
        match sandbox.release(dirs, &self.janitor) {
            Some(dirs) => *slot = Some(SandboxSlot { dir, dirs }),
            None => sandbox.remove(&self.janitor),
        }
        let records = self.capture_outputs(action)?;
        for r in &records {
            outputs::store(&self.layout.abs(&r.path), &r.node, &self.cas)
                .with_context(|| format!("storing `{}` in the local cache", r.path))?;
        }
        let blob = |b: &[u8]| -> Result<Option<String>> {
            Ok(if b.is_empty() {
                None
            } else {
                Some(self.cas.store_bytes(b)?)
            })
        };
        let result = CachedResult {
            outputs: records,
            stdout: blob(&stdout)?,
            stderr: blob(&stderr)?,
        };
        // Last: the entry appears only once everything it names is stored.
        self.ac.put(&keyed.key, &result)?;
        Ok((stdout, stderr))
    }

    /// Keeps the full output of a failed action; returns a line naming the file.
    fn keep_log(
        &self,
        action: &Action,
        line: &str,
        reason: &str,
        stdout: &[u8],
        stderr: &[u8],
    ) -> String {
        let name: String = format!(
            "{}-{}-{}",
            action.owner,
            action.category,
            action.identifier.as_deref().unwrap_or("")
        )
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
        let rel = format!("buck-out/forge/log/actions/{name}.log");
        let mut text = format!(
            "{}\n{reason}\n{line}\n---- STDOUT ----\n",
            action_title(action)
        )
        .into_bytes();
        text.extend_from_slice(stdout);
        text.extend_from_slice(b"\n---- STDERR ----\n");
        text.extend_from_slice(stderr);
        match crate::layout::write_atomic(&self.layout.abs(&rel), &text) {
            Ok(()) => format!("\nFull log: {rel}"),
            Err(_) => String::new(),
        }
    }

    fn record(&self, action: &Action, keyed: &KeyedAction, executor: &str, took: Duration) {
        let (argv, env) = match &action.kind {
            ActionKind::Run { argv, env, .. } => (argv.clone(), env.clone()),
            _ => (Vec::new(), Vec::new()),
        };
        let rec = ActionRecord {
            name: action_title(action),
            identity: format!(
                "{}|{}|{}",
                action.owner,
                action.category,
                action.identifier.as_deref().unwrap_or("")
            ),
            key: keyed.key.clone(),
            executor: executor.to_string(),
            duration_ms: took.as_millis() as u64,
            inputs: keyed
                .inputs
                .iter()
                .map(|i| (i.path.clone(), i.hash.clone()))
                .collect(),
            argv,
            env,
            outputs: action.outputs.iter().map(|o| o.path.clone()).collect(),
            tool: keyed.tool.clone(),
            changes: Vec::new(),
        };
        self.records.lock().unwrap().push(rec);
    }
}
