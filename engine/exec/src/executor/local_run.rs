//! A run action executed here: its sandbox prepared (or reused), the command spawned with
//! captured streams, the result checked (exit status, declared outputs, inputs untouched,
//! nothing undeclared written), the outputs moved into place and stored in the cache.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::atomic::Ordering;

use anyhow::{bail, Context, Result};

use forge_core::{Action, ActionKind};

use super::Build;
use crate::action_cache::CachedResult;
use crate::action_key::KeyedAction;
use crate::failure::{action_title, clip, command_line, failure, streams_block, write_full_log};
use crate::layout::replace_with;
use crate::outputs;
use crate::procs::spawn_tracked;
use crate::sandbox::worker_sandbox::{Outcome, Spec, Workers};
use crate::sandbox::{
    relative_passthrough, Sandbox, SandboxKind, FOREST_NOTICE, NETWORK_ENV, STRICT_ENV,
};

/// Lines of stderr shown in an action failure (the full text goes to the log dir).
const STDERR_TAIL_LINES: usize = 60;

/// Bytes of the command line shown in an action failure (the full line is in the log).
const COMMAND_LINE_BYTES: usize = 4096;
/// How long a fresh bubblewrap's PID namespace may take to die after bubblewrap exits (the
/// kernel kills its processes at once; this bounds a machine stalled under load).
const NAMESPACE_TEARDOWN_LIMIT: std::time::Duration = std::time::Duration::from_secs(30);

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

/// The files an action's stdout and stderr are captured in.
struct Streams {
    out: fs::File,
    err: fs::File,
}

impl Streams {
    fn new(sandbox: &Path) -> Result<Streams> {
        Ok(Streams {
            out: stream_file(sandbox, "stdout")?,
            err: stream_file(sandbox, "stderr")?,
        })
    }

    /// Everything written to stdout and to stderr.
    fn read(&mut self) -> (Vec<u8>, Vec<u8>) {
        (read_stream(&mut self.out), read_stream(&mut self.err))
    }
}

fn read_stream(file: &mut fs::File) -> Vec<u8> {
    use std::io::{Read, Seek, SeekFrom};
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(0)).is_ok() {
        let _ = file.read_to_end(&mut bytes);
    }
    bytes
}

/// What one executor worker thread keeps between its actions.
#[derive(Default)]
pub(super) struct WorkerState {
    /// The emptied sandbox directory for its next action.
    pub(super) reusable: Option<SandboxSlot>,
    /// Its persistent bubblewrap sandboxes.
    persistent: Workers,
}

/// The emptied sandbox directory a worker keeps for its next action: creating and deleting
/// a dozen nested directories per action is much of a trivial action's cost (ext4's inode
/// allocator scans past every recently deleted inode).
pub(super) struct SandboxSlot {
    pub(super) dir: PathBuf,
    /// The sandbox kind it was made for (`SandboxKind::name`).
    kind: &'static str,
    /// The directories it holds (see `Sandbox::prepare`).
    dirs: BTreeSet<String>,
}

/// How a command ended: its exit status (or why it did not start) and, when the sandbox
/// itself failed rather than the command, what to tell about it.
struct Ended {
    status: std::io::Result<ExitStatus>,
    sandbox_failure: Option<String>,
}

impl Ended {
    fn sandbox_failed(message: String, what: &str) -> Ended {
        Ended {
            status: Err(std::io::Error::other(what.to_string())),
            sandbox_failure: Some(message),
        }
    }
}

impl Build<'_> {
    /// Runs a command in its sandbox, moves its outputs into place and caches them.
    pub(super) fn run_local(
        &self,
        action: &Action,
        keyed: &KeyedAction,
        state: &mut WorkerState,
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
        self.remove_old_outputs(action)?;
        let network = env.iter().any(|(k, v)| k == NETWORK_ENV && v == "1");
        let (sandbox, dirs) = self.open_sandbox(action, keyed, state, kind, scratch, network)?;
        let mut request_env = vec![("BUCK_SCRATCH_PATH".to_string(), scratch.clone())];
        request_env.extend(env.iter().cloned());
        let line = command_line(&root.to_string_lossy(), &request_env, argv);
        request_env.push(("BUCK_BUILD_ID".to_string(), self.build_id.to_string()));
        let mut streams = Streams::new(&sandbox.dir)?;
        let before = match kind {
            SandboxKind::SymlinkForest => input_stamps(root, &keyed.inputs),
            _ => Vec::new(),
        };
        let ended = self.run_command(
            &mut state.persistent,
            &sandbox,
            argv,
            &request_env,
            network,
            &streams,
        )?;
        let (stdout, stderr) = streams.read();
        let refusal = match ended.sandbox_failure {
            Some(reason) => Some(reason),
            None => self.refusal(action, argv, &sandbox, &dirs, &before, ended.status)?,
        };
        if let Some(reason) = refusal {
            let error = self.local_failure(action, &line, &reason, &stdout, &stderr);
            sandbox.remove(&self.janitor);
            return Err(error);
        }
        self.move_outputs(action, state, sandbox, dirs)?;
        self.store_result(action, keyed, &stdout, &stderr)?;
        Ok((stdout, stderr))
    }

    /// The action's sandbox, prepared (see `Sandbox::prepare`) with the directories it holds.
    fn open_sandbox<'s>(
        &'s self,
        action: &'s Action,
        keyed: &KeyedAction,
        state: &mut WorkerState,
        kind: &'s SandboxKind,
        scratch: &'s str,
        network: bool,
    ) -> Result<(Sandbox<'s>, BTreeSet<String>)> {
        let (dir, existing) = self.sandbox_dir(state, kind);
        let inputs: Vec<String> = keyed.inputs.iter().map(|i| i.path.clone()).collect();
        let sandbox = Sandbox::new(
            kind,
            &self.layout.root,
            dir,
            &inputs,
            &action.outputs,
            scratch,
            &self.opts.sandbox_passthrough,
            network,
        );
        match sandbox.prepare(existing, &self.janitor) {
            Ok(dirs) => Ok((sandbox, dirs)),
            Err(e) => {
                sandbox.remove(&self.janitor);
                Err(e)
            }
        }
    }

    /// Runs the command in the worker's persistent sandbox or as a process of its own.
    fn run_command(
        &self,
        persistent: &mut Workers,
        sandbox: &Sandbox,
        argv: &[String],
        env: &[(String, String)],
        network: bool,
        streams: &Streams,
    ) -> Result<Ended> {
        let SandboxKind::Worker { bwrap, program } = sandbox.kind else {
            return self.run_spawned(sandbox, argv, env, streams);
        };
        let spec = Spec {
            bwrap,
            program,
            root: sandbox.root,
            system_args: crate::sandbox::system_view::local_system_binds(
                &self.opts.sandbox_passthrough,
            ),
            writable: relative_passthrough(&self.opts.sandbox_passthrough)
                .map(str::to_string)
                .collect(),
            procs_dir: &self.layout.procs_dir(),
            sandbox_dir: &self.layout.sandbox_dir(),
        };
        let request = sandbox.worker_request(argv, env);
        let outcome = persistent.run(&spec, network, &request, &streams.out, &streams.err);
        Ok(worker_ended(outcome))
    }

    /// As buck2 does: stale outputs are gone before the action runs, so a failure never
    /// leaves an old output looking current.
    fn remove_old_outputs(&self, action: &Action) -> Result<()> {
        for o in &action.outputs {
            let old = self.layout.abs(&o.path);
            if old.symlink_metadata().is_ok() {
                self.janitor.discard(&old);
            }
            if old.symlink_metadata().is_ok() {
                bail!("cannot remove the old output `{}`", o.path);
            }
        }
        Ok(())
    }

    /// The sandbox directory for an action of `kind` and the directories it already holds:
    /// the one the same worker emptied after its previous action when it was made for the
    /// same kind, else a new one.
    fn sandbox_dir(
        &self,
        state: &mut WorkerState,
        kind: &SandboxKind,
    ) -> (PathBuf, BTreeSet<String>) {
        let reused = match state.reusable.take() {
            Some(slot) if slot.kind == kind.name() => Some(slot),
            Some(slot) => {
                self.janitor.discard(&slot.dir);
                None
            }
            None => None,
        };
        match reused {
            Some(s) => (s.dir, s.dirs),
            None => {
                let n = self.sandbox_counter.fetch_add(1, Ordering::Relaxed);
                let short_id = &self.build_id[..8];
                let dir = self.layout.sandbox_dir().join(format!("{short_id}-{n}"));
                (dir, BTreeSet::new())
            }
        }
    }

    /// The command as a process of its own (in a fresh bubblewrap or the symlink forest),
    /// waited for together with whatever it left running.
    fn run_spawned(
        &self,
        sandbox: &Sandbox,
        argv: &[String],
        env: &[(String, String)],
        streams: &Streams,
    ) -> Result<Ended> {
        let (mut cmd, namespace) = sandbox.command(argv, env)?;
        cmd.stdout(streams.out.try_clone()?);
        cmd.stderr(streams.err.try_clone()?);
        let spawned = spawn_tracked(&mut cmd, &self.layout.procs_dir());
        // This process's copies of the descriptors the command was given (its streams,
        // bubblewrap's status pipe) are closed now that it has them.
        drop(cmd);
        let status = spawned.and_then(|(mut child, group)| {
            let status = child.wait();
            // Whatever the command left running in the background dies with it.
            group.finish();
            status
        });
        let mut sandbox_failure = None;
        // A fresh bubblewrap exits before its PID namespace is torn down; the outputs
        // are read only once no process of the action can write them any more.
        if let Some(namespace) = namespace {
            if !namespace.wait_namespace_gone(NAMESPACE_TEARDOWN_LIMIT) {
                sandbox_failure = Some(format!(
                    "The action's PID namespace was still alive {} s after bubblewrap exited; its outputs are not trusted",
                    NAMESPACE_TEARDOWN_LIMIT.as_secs()
                ));
            }
        }
        Ok(Ended {
            status,
            sandbox_failure,
        })
    }

    /// Why the finished command's result is refused (it failed, an output is missing or
    /// links outside the outputs, an input changed, an undeclared path was written), or
    /// `None` when it stands.
    fn refusal(
        &self,
        action: &Action,
        argv: &[String],
        sandbox: &Sandbox,
        dirs: &BTreeSet<String>,
        before: &[(String, Stamp)],
        status: std::io::Result<ExitStatus>,
    ) -> Result<Option<String>> {
        let status = match status {
            Ok(s) => s,
            Err(e) => {
                return Ok(Some(format!(
                    "Local command could not be started: {e} (program `{}`)",
                    clip(&argv[0], COMMAND_LINE_BYTES)
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
            return Ok(Some(reason));
        }
        let missing: Vec<String> = action
            .outputs
            .iter()
            .filter(|o| sandbox.dir.join(&o.path).symlink_metadata().is_err())
            .map(|o| format!("`{}`", o.path))
            .collect();
        if !missing.is_empty() {
            return Ok(Some(format!(
                "Required outputs are missing: Action failed to produce outputs: {}",
                missing.join(", ")
            )));
        }
        let declared: Vec<String> = action.outputs.iter().map(|o| o.path.clone()).collect();
        let escapes = outputs::link_escapes(&sandbox.dir, &declared)
            .with_context(|| format!("reading the outputs in `{}`", sandbox.dir.display()))?;
        if !escapes.is_empty() {
            let list: Vec<String> = escapes
                .iter()
                .map(|(l, t)| format!("`{l}` -> `{t}`"))
                .collect();
            return Ok(Some(format!(
                "Output symlink points outside the action's outputs: {} (a symlink in an output must be relative and stay inside the action's own outputs; copy the file, or declare it as an input of the action that reads it)",
                list.join(", ")
            )));
        }
        if let Some(changed) = before
            .iter()
            .find(|(rel, stamp)| file_stamp(&sandbox.root.join(rel)) != *stamp)
        {
            return Ok(Some(format!(
                "Input `{}` changed while the action ran: in the symlink-forest sandbox inputs are links to the real files, so a write to one reaches the project (write a declared output instead)",
                changed.0
            )));
        }
        let undeclared = sandbox.undeclared_writes(dirs);
        if !undeclared.is_empty() {
            let list: Vec<String> = undeclared.iter().map(|p| format!("`{p}`")).collect();
            return Ok(Some(format!(
                "Action wrote undeclared paths: {} (only declared outputs and $BUCK_SCRATCH_PATH may be written; declare them with ctx.actions.declare_output)",
                list.join(", ")
            )));
        }
        Ok(None)
    }

    /// The error of a refused run: the reason, the command line, the streams' tails and
    /// where the full output is kept.
    fn local_failure(
        &self,
        action: &Action,
        line: &str,
        reason: &str,
        stdout: &[u8],
        stderr: &[u8],
    ) -> anyhow::Error {
        let name = format!(
            "{}-{}-{}",
            action.owner,
            action.category,
            action.identifier.as_deref().unwrap_or("")
        );
        let head = format!("{}\n{reason}\n{line}", action_title(action));
        let log = match write_full_log(&self.layout.root, "actions", &name, &head, stdout, stderr) {
            Some(rel) => format!("\nFull log: {rel}"),
            None => String::new(),
        };
        let body = format!(
            "{reason}\nLocal command: {}\n{}{log}",
            clip(line, COMMAND_LINE_BYTES),
            streams_block(stdout, stderr, STDERR_TAIL_LINES)
        );
        anyhow::Error::new(failure(action, &body))
    }

    /// Moves the outputs out of the sandbox into place; the emptied sandbox is kept for the
    /// worker's next action when it can be.
    fn move_outputs(
        &self,
        action: &Action,
        state: &mut WorkerState,
        sandbox: Sandbox,
        dirs: BTreeSet<String>,
    ) -> Result<()> {
        for o in &action.outputs {
            replace_with(&sandbox.dir.join(&o.path), &self.layout.abs(&o.path))
                .with_context(|| format!("moving output `{}` into place", o.path))?;
        }
        match sandbox.release(dirs, &self.janitor) {
            Some(dirs) => {
                state.reusable = Some(SandboxSlot {
                    dir: sandbox.dir,
                    kind: sandbox.kind.name(),
                    dirs,
                })
            }
            None => sandbox.remove(&self.janitor),
        }
        Ok(())
    }

    /// Stores the outputs (in place) and the streams in the local cache, then the action
    /// cache entry naming them.
    fn store_result(
        &self,
        action: &Action,
        keyed: &KeyedAction,
        stdout: &[u8],
        stderr: &[u8],
    ) -> Result<()> {
        let records = self.capture_outputs(action)?;
        for r in &records {
            let abs = self.layout.abs(&r.path);
            outputs::store(&abs, &r.node, &self.cas)
                .with_context(|| format!("storing `{}` in the local cache", r.path))?;
            // Storing made the files read-only and linked them: only their ctime changed.
            for file in outputs::files(&abs, &r.node) {
                self.digests.keep_after_own_metadata_change(&file);
            }
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
            stdout: blob(stdout)?,
            stderr: blob(stderr)?,
        };
        // Last: the entry appears only once everything it names is stored.
        self.ac.put(&keyed.key, &result)?;
        Ok(())
    }
}

/// What the persistent sandbox reports, as the command's end.
fn worker_ended(outcome: Result<Outcome>) -> Ended {
    match outcome {
        Ok(Outcome::Exited(s)) => Ended {
            status: Ok(s),
            sandbox_failure: None,
        },
        Ok(Outcome::ExecFailed(e)) => Ended {
            status: Err(e),
            sandbox_failure: None,
        },
        Ok(Outcome::SetupFailed(m)) => Ended::sandbox_failed(
            format!("The sandbox could not be set up, so the command did not run: {m}"),
            "sandbox setup failed",
        ),
        Ok(Outcome::WorkerDied(why)) => Ended::sandbox_failed(
            format!(
                "The persistent sandbox running the command died: {why}; the command did not complete (the next action starts a new sandbox)"
            ),
            "sandbox died",
        ),
        Err(e) => Ended::sandbox_failed(format!("{e:#}"), "sandbox failed"),
    }
}
