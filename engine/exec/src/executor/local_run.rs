//! A run action executed here: its sandbox prepared (or reused), the command spawned with
//! captured streams, the result checked (exit status, declared outputs, inputs untouched,
//! nothing undeclared written), the outputs moved into place and stored in the cache.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;

use anyhow::{bail, Context, Result};

use forge_core::{Action, ActionKind};

use super::Build;
use crate::action_cache::CachedResult;
use crate::action_key::KeyedAction;
use crate::failure::{action_title, clip, command_line, failure, streams_block};
use crate::layout::replace_with;
use crate::outputs;
use crate::procs::spawn_tracked;
use crate::sandbox::worker_sandbox::{Outcome, Spec, Workers};
use crate::sandbox::{
    relative_passthrough, system_bwrap_args, Sandbox, SandboxKind, FOREST_NOTICE, NETWORK_ENV,
    STRICT_ENV,
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

/// Everything written to a stream file.
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
        // A sandbox directory the same worker emptied after its previous action is reused.
        let reused = match state.reusable.take() {
            Some(slot) if slot.kind == kind.name() => Some(slot),
            Some(slot) => {
                self.janitor.discard(&slot.dir);
                None
            }
            None => None,
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
        let line = command_line(&root.to_string_lossy(), &request_env, argv);
        request_env.push(("BUCK_BUILD_ID".to_string(), self.build_id.to_string()));
        let mut out_file = stream_file(&dir, "stdout")?;
        let mut err_file = stream_file(&dir, "stderr")?;
        let before = match kind {
            SandboxKind::SymlinkForest => input_stamps(root, &keyed.inputs),
            _ => Vec::new(),
        };
        // A failure of the sandbox itself (not of the command), with what to do about it.
        let mut sandbox_failure = None;
        let status = match kind {
            SandboxKind::Worker { bwrap, program } => {
                let spec = Spec {
                    bwrap,
                    program,
                    root,
                    system_args: system_bwrap_args(&self.opts.sandbox_passthrough),
                    writable: relative_passthrough(&self.opts.sandbox_passthrough)
                        .map(str::to_string)
                        .collect(),
                    procs_dir: &self.layout.procs_dir(),
                    sandbox_dir: &self.layout.sandbox_dir(),
                };
                let request = sandbox.worker_request(argv, &request_env);
                match state
                    .persistent
                    .run(&spec, network, &request, &out_file, &err_file)
                {
                    Ok(Outcome::Exited(s)) => Ok(s),
                    Ok(Outcome::ExecFailed(e)) => Err(e),
                    Ok(Outcome::SetupFailed(m)) => {
                        sandbox_failure = Some(format!(
                            "The sandbox could not be set up, so the command did not run: {m}"
                        ));
                        Err(std::io::Error::other("sandbox setup failed"))
                    }
                    Ok(Outcome::WorkerDied(why)) => {
                        sandbox_failure = Some(format!(
                            "The persistent sandbox running the command died: {why}; the command did not complete (the next action starts a new sandbox)"
                        ));
                        Err(std::io::Error::other("sandbox died"))
                    }
                    Err(e) => {
                        sandbox_failure = Some(format!("{e:#}"));
                        Err(std::io::Error::other("sandbox failed"))
                    }
                }
            }
            _ => {
                let (mut cmd, namespace) = sandbox.command(argv, &request_env)?;
                cmd.stdout(out_file.try_clone()?);
                cmd.stderr(err_file.try_clone()?);
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
                status
            }
        };
        let stdout = read_stream(&mut out_file);
        let stderr = read_stream(&mut err_file);
        let fail = |reason: String| -> anyhow::Error {
            let log = self.keep_log(action, &line, &reason, &stdout, &stderr);
            let body = format!(
                "{reason}\nLocal command: {}\n{}{log}",
                clip(&line, COMMAND_LINE_BYTES),
                streams_block(&stdout, &stderr, STDERR_TAIL_LINES)
            );
            sandbox.remove(&self.janitor);
            anyhow::Error::new(failure(action, &body))
        };
        if let Some(reason) = sandbox_failure {
            return Err(fail(reason));
        }
        let status = match status {
            Ok(s) => s,
            Err(e) => {
                return Err(fail(format!(
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
        let declared: Vec<String> = action.outputs.iter().map(|o| o.path.clone()).collect();
        let escapes = outputs::link_escapes(&sandbox.dir, &declared)
            .with_context(|| format!("reading the outputs in `{}`", sandbox.dir.display()))?;
        if !escapes.is_empty() {
            let list: Vec<String> = escapes
                .iter()
                .map(|(l, t)| format!("`{l}` -> `{t}`"))
                .collect();
            return Err(fail(format!(
                "Output symlink points outside the action's outputs: {} (a symlink in an output must be relative and stay inside the action's own outputs; copy the file, or declare it as an input of the action that reads it)",
                list.join(", ")
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
        let undeclared = sandbox.undeclared_writes(&dirs);
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
            Some(dirs) => {
                state.reusable = Some(SandboxSlot {
                    dir,
                    kind: sandbox.kind.name(),
                    dirs,
                })
            }
            None => sandbox.remove(&self.janitor),
        }
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
}
