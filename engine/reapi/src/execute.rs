//! Remote execution: `Execution.Execute` of an action whose inputs this client uploads
//! (only the blobs `FindMissingBlobs` lacks), `WaitExecution` when the operation stream
//! drops, and the `ExecuteResponse` turned into outputs, stdout/stderr and exit code.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
use bazel_remote_apis::google::longrunning::{operation, Operation};
use prost::Message;
use tonic::Code;

use crate::action::encode_action_with;
use crate::cas::BlobSource;
use crate::client::Inner;
use crate::config::SECTION;
use crate::transport::{is_transient, status_detail};
use crate::{ActionDescription, Digest, RemoteHit};

/// How often a dropped operation stream is picked up again before the action counts as
/// failed; each attempt waits `initial_backoff` doubled.
const MAX_RESUMES: u32 = 8;

/// An action to run remotely. `action.platform` already holds the execution platform's
/// `remote_execution_properties`; they go into both Command.platform and Action.platform.
pub struct RemoteCommand<'a> {
    pub action: &'a ActionDescription,
    /// Where each input of `action.inputs` lives on disk, by its input-root path: the
    /// bytes of the blobs the CAS lacks come from there.
    pub input_sources: &'a HashMap<String, PathBuf>,
    /// `ExecuteRequest.skip_cache_lookup`: run even when the action cache has a result.
    pub skip_cache_lookup: bool,
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
}

/// The digest of the Action that remote execution submits for `desc`.
pub fn remote_action_digest(desc: &ActionDescription) -> Result<Digest> {
    Ok(encode_action_with(desc, true)?.action_digest)
}

impl Inner {
    pub(crate) async fn execute(&self, cmd: &RemoteCommand<'_>) -> Result<RemoteOutcome> {
        let Some(client) = self.clients.execution.clone() else {
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
        let done = self.run_operation(client, request).await?;
        self.outcome_of(done, &encoded.action_digest).await
    }

    /// Follows the operation until it is done: Execute's stream, then WaitExecution on
    /// the operation's name whenever the stream ends early or drops on a transient error
    /// (a restarted server, a cut connection). Without a name yet, Execute is sent again:
    /// the same Action digest, so the engine merges it with the queued one.
    async fn run_operation(
        &self,
        client: re::execution_client::ExecutionClient<crate::transport::Svc>,
        request: re::ExecuteRequest,
    ) -> Result<Operation> {
        let mut name: Option<String> = None;
        let mut backoff = self.opts.initial_backoff;
        let mut resumes = 0;
        loop {
            let mut c = client.clone();
            let started = match &name {
                None => c.execute(request.clone()).await,
                Some(n) => {
                    c.wait_execution(re::WaitExecutionRequest { name: n.clone() })
                        .await
                }
            };
            let failure = match started {
                Ok(resp) => {
                    let mut stream = resp.into_inner();
                    loop {
                        match stream.message().await {
                            Ok(Some(op)) => {
                                if !op.name.is_empty() {
                                    name = Some(op.name.clone());
                                }
                                if op.done {
                                    return Ok(op);
                                }
                            }
                            Ok(None) => break tonic::Status::unavailable("stream ended early"),
                            Err(s) => break s,
                        }
                    }
                }
                Err(s) => s,
            };
            // WaitExecution on an operation a restarted server forgot: start over.
            if failure.code() == Code::NotFound && name.is_some() {
                name = None;
            } else if !is_transient(failure.code()) {
                bail!(
                    "remote execution: {:?}: {}",
                    failure.code(),
                    status_detail(&failure)
                );
            }
            resumes += 1;
            if resumes > MAX_RESUMES {
                bail!(
                    "remote execution: the engine at `{}` dropped the operation {} times (last: \
                     {:?}: {})",
                    self.cfg.cas.written,
                    resumes,
                    failure.code(),
                    status_detail(&failure)
                );
            }
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(Duration::from_secs(10));
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
            bail!(
                "remote execution of action {action} failed: {:?}: {}{}",
                Code::from_i32(status.code),
                status.message,
                if resp.message.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", resp.message)
                }
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
        })
    }
}
