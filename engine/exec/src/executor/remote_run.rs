//! A run action executed by the remote engine: its description plus the platform's
//! `remote_execution_properties`, inputs uploaded from where they are on disk, and the
//! result restored through the local CAS and cached like a local run. A non-zero exit is
//! an action failure worded like a local one (exit code, command line, stderr).

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::{anyhow, Result};

use forge_core::{Action, ActionKind};
use forge_reapi::{ActionDescription, QueueTimeout, RemoteCommand};

use super::{Build, Outcome};
use crate::action_key::KeyedAction;
use crate::failure::{clip, command_line, failure, streams_block};

/// As for local failures: the tail of stderr and a bounded command line.
const STDERR_TAIL_LINES: usize = 60;
const COMMAND_LINE_BYTES: usize = 4096;

impl Build<'_> {
    pub(super) fn run_remote(
        &self,
        action: &Action,
        keyed: &KeyedAction,
        desc: &ActionDescription,
    ) -> Result<Outcome> {
        let Some((engine, policy)) = self.remote.engine() else {
            return Err(anyhow!(failure(
                action,
                "Remote execution is enabled by the execution platform (remote_enabled = True) \
                 but `[buck2_re_client]` configures no engine (`address` or `engine_address`) \
                 or the remote cache is off (--remote-cache=off)"
            )));
        };
        let mut desc = desc.clone();
        desc.platform.extend(policy.properties.iter().cloned());
        desc.platform.sort();
        desc.platform.dedup();
        let sources: HashMap<String, PathBuf> = desc
            .inputs
            .iter()
            .map(|i| (i.path.clone(), self.layout.abs(&i.path)))
            .collect();
        let outcome = engine
            .execute(&RemoteCommand {
                action: &desc,
                input_sources: &sources,
                skip_cache_lookup: false,
                queue_timeout: policy.queue_timeout,
            })
            .map_err(|e| anyhow!(failure(action, &remote_failure(&e, &policy.properties))))?;
        if outcome.exit_code != 0 {
            let (argv, env) = match &action.kind {
                ActionKind::Run { argv, env, .. } => (argv.as_slice(), env.as_slice()),
                _ => unreachable!("run_remote is only called for run actions"),
            };
            let line = command_line(&self.layout.root.to_string_lossy(), env, argv);
            let body = format!(
                "Remote command returned non-zero exit code {}\nRemote command: {}\n{}",
                outcome.exit_code,
                clip(&line, COMMAND_LINE_BYTES),
                streams_block(&outcome.stdout, &outcome.stderr, STDERR_TAIL_LINES)
            );
            return Err(anyhow!(failure(action, &body)));
        }
        let hit = outcome
            .outputs
            .as_ref()
            .ok_or_else(|| anyhow!("remote execution gave no outputs"))?;
        let cached = self
            .remote
            .materialize(action, hit, &self.cas, &self.digests)
            .map_err(|e| anyhow!(failure(action, &format!("Remote result: {e:#}"))))?;
        if !self.restore(&cached)? {
            return Err(anyhow!(failure(
                action,
                "Remote result: a downloaded blob does not match its digest"
            )));
        }
        self.ac.put(&keyed.key, &cached)?;
        Ok(if outcome.cached {
            Outcome::Remote
        } else {
            Outcome::RemoteExec
        })
    }
}

/// The failure's text; a queue timeout says which properties no worker offered.
fn remote_failure(e: &anyhow::Error, properties: &[(String, String)]) -> String {
    let Some(timeout) = e.downcast_ref::<QueueTimeout>() else {
        return format!("Remote execution failed: {e:#}");
    };
    let asked: Vec<String> = properties.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let offer: Vec<String> = asked.iter().map(|p| format!("--property {p}")).collect();
    format!(
        "Remote execution failed: {timeout} (the limit is [build] \
         remote_execution_cancel_on_estimated_queue_time_exceeds_s).\nThe execution platform \
         asks for the properties {}: no worker of the engine offers them all. Start one that \
         does (`forge-re-worker {}`), or build without remote execution.",
        asked.join(", "),
        offer.join(" ")
    )
}
