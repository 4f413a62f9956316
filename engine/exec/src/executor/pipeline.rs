//! One action's way through the build: its key, the local action cache (up to date, or
//! restored from the CAS), the remote cache, then execution (a sandboxed command or an
//! in-process action) and the cache entry.

use std::fs;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context, Result};

use forge_core::{Action, ActionKind};

use super::local_run::WorkerState;
use super::{Build, Outcome};
use crate::action_cache::{CachedResult, OutputRecord};
use crate::action_key::{describe, key_action, KeyedAction};
use crate::build_log::{self, ActionRecord};
use crate::failure::{action_title, failure, ActionFailure};
use crate::in_process;
use crate::layout::{remove_any, replace_with, temp_sibling};
use crate::outputs;
use crate::placement::{place, Placement};

/// An action's remote cache key and, for a local run, why its result was not uploaded.
#[derive(Default)]
pub(super) struct RemoteNote {
    key: Option<String>,
    not_shared: Option<String>,
}

impl Build<'_> {
    pub(super) fn process(
        &self,
        action: &Action,
        slot: &mut WorkerState,
    ) -> Result<Outcome, ActionFailure> {
        let start = Instant::now();
        let keyed = key_action(action, &self.layout.root, &self.digests)
            .map_err(|e| failure(action, &format!("{e:#}")))?;
        let mut note = RemoteNote::default();
        match self.process_keyed(action, &keyed, slot, &mut note) {
            Ok(outcome) => {
                self.record(action, &keyed, outcome.name(), start.elapsed(), note);
                Ok(outcome)
            }
            Err(e) => {
                self.record(action, &keyed, "failed", start.elapsed(), note);
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
        slot: &mut WorkerState,
        note: &mut RemoteNote,
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
            note.key = self.remote.key_of(desc);
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
            ActionKind::Run { .. } => match place(action, self.remote.execution_policy()) {
                Placement::Remote if desc.is_some() => {
                    self.run_remote(action, keyed, desc.as_ref().expect("checked"))
                }
                Placement::Nowhere(why) => Err(anyhow!(failure(action, &why))),
                _ => {
                    let (stdout, stderr) = self.run_local(action, keyed, slot)?;
                    if let Some(desc) = &desc {
                        note.not_shared = self.remote.upload(
                            action,
                            desc,
                            self.layout,
                            &stdout,
                            &stderr,
                            &self.progress,
                        );
                    }
                    Ok(Outcome::Local)
                }
            },
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
    pub(super) fn restore(&self, cached: &CachedResult) -> Result<bool> {
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

    pub(super) fn capture_outputs(&self, action: &Action) -> Result<Vec<OutputRecord>> {
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

    fn record(
        &self,
        action: &Action,
        keyed: &KeyedAction,
        executor: &str,
        took: Duration,
        note: RemoteNote,
    ) {
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
            // Every way an action succeeds leaves its result under its key.
            output_digests: match executor {
                "failed" => Vec::new(),
                _ => self
                    .ac
                    .get(&keyed.key)
                    .map(|r| build_log::flatten_outputs(&r.outputs))
                    .unwrap_or_default(),
            },
            tool: keyed.tool.clone(),
            changes: Vec::new(),
            remote_key: note.key,
            not_shared: note.not_shared,
        };
        self.records.lock().unwrap().push(rec);
    }
}
