//! Remote execution: `Execution.Execute` of an action whose inputs this client uploads
//! (only the blobs `FindMissingBlobs` lacks), `WaitExecution` when the operation stream
//! drops, and the `ExecuteResponse` turned into outputs, stdout/stderr and exit code.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
use bazel_remote_apis::google::longrunning::{operation, Operation};
use prost::Message;
use tonic::Code;

use crate::action::encode_action_with;
use crate::cas::BlobSource;
use crate::config::SECTION;
use crate::in_flight::{self, Registered};
use crate::session::Inner;
use crate::transport::{is_transient, status_detail, Engine};
use crate::{ActionDescription, Digest, RemoteHit};

/// How long the engine may stay unreachable (a restart, a cut connection) while this
/// client keeps resuming the operation, each attempt `initial_backoff` doubled up to 10 s.
/// A BuildGrid restart takes its Python start-up, tens of seconds on a busy machine.
const ENGINE_AWAY_LIMIT: Duration = Duration::from_secs(180);

/// An action to run remotely. `action.platform` already holds the execution platform's
/// `remote_execution_properties`; they go into both Command.platform and Action.platform.
pub struct RemoteCommand<'a> {
    pub action: &'a ActionDescription,
    /// Where each input of `action.inputs` lives on disk, by its input-root path: the
    /// bytes of the blobs the CAS lacks come from there.
    pub input_sources: &'a HashMap<String, PathBuf>,
    /// `ExecuteRequest.skip_cache_lookup`: run even when the action cache has a result.
    pub skip_cache_lookup: bool,
    /// How long the action may wait for a worker before it is cancelled (buck2's `[build]
    /// remote_execution_cancel_on_estimated_queue_time_exceeds_s`); `None`: no limit.
    pub queue_timeout: Option<Duration>,
}

/// No worker took the action within the queue limit; the operation was cancelled.
#[derive(Debug)]
pub struct QueueTimeout {
    pub waited: Duration,
    /// The engine's operation name (empty when the engine never named it).
    pub operation: String,
}

impl std::fmt::Display for QueueTimeout {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "the action waited more than {} s in the remote execution queue and no worker \
             took it",
            self.waited.as_secs()
        )?;
        if !self.operation.is_empty() {
            write!(f, "; its operation `{}` was cancelled", self.operation)?;
        }
        Ok(())
    }
}

impl std::error::Error for QueueTimeout {}

/// The operation's progress across Execute and its WaitExecution resumes.
struct Watch {
    /// The last message of the engine's (or the start).
    heard_from: Instant,
    name: Option<String>,
    /// WaitExecution calls made (each resume of a named operation).
    wait_executions: u32,
    /// A worker has the action (stage EXECUTING or later): the queue limit is over.
    taken: bool,
    /// When the queue limit ends, and the limit itself.
    queue_deadline: Option<(Instant, Duration)>,
    /// The named operation in this process's list of operations to cancel if it stops.
    registered: Option<(String, Registered)>,
}

impl Watch {
    /// The engine named the operation `name`: follow it under that name from now on.
    fn named(&mut self, engine: &Engine, name: &str) {
        if self.registered.as_ref().is_some_and(|(n, _)| n == name) {
            return;
        }
        self.name = Some(name.to_owned());
        self.registered = Some((name.to_owned(), Registered::register(engine, name)));
    }
}

/// How one Execute or WaitExecution stream ended.
enum Followed {
    Done(Operation),
    Dropped(tonic::Status),
    QueueTimedOut(Duration),
}

/// Whether the operation's `ExecuteOperationMetadata` says a worker is running it.
fn taken_by_a_worker(op: &Operation) -> bool {
    op.metadata
        .as_ref()
        .and_then(|any| re::ExecuteOperationMetadata::decode(any.value.as_slice()).ok())
        .is_some_and(|m| m.stage >= re::execution_stage::Value::Executing as i32)
}

/// What the engine reported for an action.
#[derive(Debug)]
pub struct RemoteOutcome {
    pub exit_code: i32,
    /// `ExecuteResponse.cached_result`: served from the action cache, nothing ran.
    pub cached: bool,
    /// The outputs (verified present in the CAS); `None` when the action failed.
    pub outputs: Option<RemoteHit>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
    /// `ExecutedActionMetadata.worker`, for messages.
    pub worker: String,
    /// How often the operation was picked up again with WaitExecution after its stream
    /// dropped (a restarted engine, a cut connection).
    pub wait_executions: u32,
}

/// The digest of the Action that remote execution submits for `desc`.
pub fn remote_action_digest(desc: &ActionDescription) -> Result<Digest> {
    Ok(encode_action_with(desc, true)?.action_digest)
}

impl Inner {
    pub(crate) async fn execute(&self, cmd: &RemoteCommand<'_>) -> Result<RemoteOutcome> {
        let Some(engine) = self.clients.execution.clone() else {
            bail!(
                "[{SECTION}] has no `address` or `engine_address`: remote execution needs the \
                 address of an Execution service"
            );
        };
        let encoded = encode_action_with(cmd.action, true)?;
        let mut blobs: Vec<(Digest, BlobSource)> = encoded
            .blobs
            .iter()
            .map(|(d, b)| (d.clone(), BlobSource::Bytes(Arc::new(b.clone()))))
            .collect();
        for input in &cmd.action.inputs {
            let Some(path) = cmd.input_sources.get(&input.path) else {
                bail!(
                    "input `{}` has no file on disk to upload it from",
                    input.path
                );
            };
            blobs.push((input.digest.clone(), BlobSource::File(path.clone())));
        }
        self.upload_blobs(blobs)
            .await
            .context("uploading the action's inputs for remote execution")?;

        let request = re::ExecuteRequest {
            instance_name: self.cfg.instance_name.clone(),
            skip_cache_lookup: cmd.skip_cache_lookup,
            action_digest: Some(encoded.action_digest.to_proto()),
            ..Default::default()
        };
        let (done, wait_executions) = self
            .run_operation(engine, request, cmd.queue_timeout)
            .await?;
        let mut outcome = self.outcome_of(done, &encoded.action_digest).await?;
        outcome.wait_executions = wait_executions;
        Ok(outcome)
    }

    /// Follows the operation until it is done: Execute's stream, then WaitExecution on
    /// the operation's name whenever the stream ends early or drops on a transient error
    /// (a restarted server, a cut connection). Without a name yet, Execute is sent again:
    /// the same Action digest, so the engine merges it with the queued one. An operation
    /// no worker has taken when `queue_timeout` ends is cancelled ([`QueueTimeout`]).
    async fn run_operation(
        &self,
        engine: Engine,
        request: re::ExecuteRequest,
        queue_timeout: Option<Duration>,
    ) -> Result<(Operation, u32)> {
        let mut watch = Watch {
            heard_from: Instant::now(),
            name: None,
            wait_executions: 0,
            taken: false,
            queue_deadline: queue_timeout.map(|t| (Instant::now() + t, t)),
            registered: None,
        };
        let mut backoff = self.opts.initial_backoff;
        let mut resumes = 0;
        loop {
            // The process ends by a signal once its operations are cancelled: nothing more
            // is submitted, and no result may let the build finish first.
            if in_flight::stopping() {
                return std::future::pending().await;
            }
            let attempt = Instant::now();
            let followed = self.follow(&engine, &request, &mut watch).await;
            if in_flight::stopping() {
                return std::future::pending().await;
            }
            let failure = match followed {
                Followed::Done(op) => return Ok((op, watch.wait_executions)),
                Followed::Dropped(s) => s,
                Followed::QueueTimedOut(waited) => {
                    let operation = watch.name.clone().unwrap_or_default();
                    in_flight::cancel(&engine, &operation, self.opts.call_timeout).await;
                    return Err(QueueTimeout { waited, operation }.into());
                }
            };
            // WaitExecution on an operation a restarted server forgot: start over.
            if failure.code() == Code::NotFound && watch.name.is_some() {
                watch.name = None;
                watch.registered = None;
            } else if !is_transient(failure.code()) {
                let why = format!(
                    "remote execution: {:?}: {}",
                    failure.code(),
                    status_detail(&failure)
                );
                return Err(self.give_up(&engine, &watch, why).await);
            }
            resumes += 1;
            if watch.heard_from.elapsed() > ENGINE_AWAY_LIMIT {
                let why = format!(
                    "remote execution: lost the operation at `{}`: no answer for {} s over {} \
                     attempts (last: {:?}: {})",
                    self.cfg.cas.written,
                    watch.heard_from.elapsed().as_secs(),
                    resumes,
                    failure.code(),
                    status_detail(&failure)
                );
                return Err(self.give_up(&engine, &watch, why).await);
            }
            if watch.heard_from > attempt {
                // The stream worked before it dropped: the backoff starts over.
                backoff = self.opts.initial_backoff;
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(10));
        }
    }

    /// One stream of the operation: Execute while it has no name, else WaitExecution.
    async fn follow(
        &self,
        engine: &Engine,
        request: &re::ExecuteRequest,
        watch: &mut Watch,
    ) -> Followed {
        let mut c = engine.execution.clone();
        let started = match &watch.name {
            None => c.execute(request.clone()).await,
            Some(n) => {
                watch.wait_executions += 1;
                c.wait_execution(re::WaitExecutionRequest { name: n.clone() })
                    .await
            }
        };
        let mut stream = match started {
            Ok(resp) => resp.into_inner(),
            Err(s) => return Followed::Dropped(s),
        };
        loop {
            let next = match watch.queue_deadline.filter(|_| !watch.taken) {
                Some((deadline, limit)) => {
                    match tokio::time::timeout_at(deadline.into(), stream.message()).await {
                        Ok(next) => next,
                        Err(_) => return Followed::QueueTimedOut(limit),
                    }
                }
                None => stream.message().await,
            };
            match next {
                Ok(Some(op)) => {
                    watch.heard_from = Instant::now();
                    if !op.name.is_empty() {
                        watch.named(engine, &op.name);
                    }
                    watch.taken |= op.done || taken_by_a_worker(&op);
                    if op.done {
                        return Followed::Done(op);
                    }
                }
                Ok(None) => {
                    return Followed::Dropped(tonic::Status::unavailable("stream ended early"))
                }
                Err(s) => return Followed::Dropped(s),
            }
        }
    }

    /// The build gives up on the operation: it is cancelled, so that no worker runs (or
    /// goes on running) an action nobody waits for, and the error says whether that worked.
    /// Best effort: an engine that does not answer keeps the operation.
    async fn give_up(&self, engine: &Engine, watch: &Watch, why: String) -> anyhow::Error {
        let Some(name) = &watch.name else {
            return anyhow!(why);
        };
        if in_flight::cancel(engine, name, self.opts.call_timeout).await {
            anyhow!("{why}; its operation `{name}` was cancelled")
        } else {
            anyhow!(
                "{why}; cancelling its operation `{name}` failed too (the engine did not \
                 answer), so a worker may still run it"
            )
        }
    }

    async fn outcome_of(&self, op: Operation, action: &Digest) -> Result<RemoteOutcome> {
        let any = match op.result {
            Some(operation::Result::Response(any)) => any,
            Some(operation::Result::Error(status)) => bail!(
                "remote execution of action {action} failed: code {}: {}",
                status.code,
                status.message
            ),
            None => bail!("remote execution of action {action}: a done operation without result"),
        };
        let resp = re::ExecuteResponse::decode(any.value.as_slice())
            .with_context(|| format!("decoding the ExecuteResponse ({})", any.type_url))?;
        if let Some(status) = resp.status.as_ref().filter(|s| s.code != 0) {
            // A timed-out action's result holds what it wrote until it was killed.
            let stderr = match &resp.result {
                Some(r) => self
                    .std_stream(&r.stderr_raw, r.stderr_digest.as_ref())
                    .await
                    .ok()
                    .flatten()
                    .unwrap_or_default(),
                None => Vec::new(),
            };
            bail!(
                "remote execution of action {action} failed: {:?}: {}{}{}",
                Code::from_i32(status.code),
                status.message,
                if resp.message.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", resp.message)
                },
                stderr_tail(&stderr)
            );
        }
        let result = resp
            .result
            .ok_or_else(|| anyhow!("remote execution of action {action}: no ActionResult"))?;
        let worker = result
            .execution_metadata
            .as_ref()
            .map(|m| m.worker.clone())
            .unwrap_or_default();
        let exit_code = result.exit_code;
        let stdout = self
            .std_stream(&result.stdout_raw, result.stdout_digest.as_ref())
            .await?
            .unwrap_or_default();
        let stderr = self
            .std_stream(&result.stderr_raw, result.stderr_digest.as_ref())
            .await?
            .unwrap_or_default();
        let outputs = if exit_code == 0 {
            let hit = self.hit_from_result(result).await?.ok_or_else(|| {
                anyhow!(
                    "remote execution of action {action}: the result's outputs cannot be \
                     restored (missing from the CAS, or symlinks/unsafe paths)"
                )
            })?;
            Some(hit)
        } else {
            None
        };
        Ok(RemoteOutcome {
            exit_code,
            cached: resp.cached_result,
            outputs,
            stdout,
            stderr,
            worker,
            wait_executions: 0,
        })
    }
}

/// The last lines of an action's stderr, as a block to append to a message.
fn stderr_tail(stderr: &[u8]) -> String {
    const LINES: usize = 20;
    let text = String::from_utf8_lossy(stderr);
    let lines: Vec<&str> = text.lines().collect();
    if lines.is_empty() {
        return String::new();
    }
    format!(
        "\nstderr (last lines):\n{}",
        lines[lines.len().saturating_sub(LINES)..].join("\n")
    )
}
