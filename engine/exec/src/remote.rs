//! Glue between the executor and a [`RemoteCache`]: a lookup after the local cache misses,
//! materialising a hit through the local CAS, uploading a local result when allowed, and
//! degrading to local execution on any remote error (one warning per build).

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use anyhow::{bail, Result};

use forge_core::Action;
use forge_reapi::{ActionDescription, LocalOutput, RemoteCache, RemoteHit};

use crate::action_cache::{CachedResult, Node, OutputRecord};
use crate::cas::Cas;
use crate::digest::DigestCache;
use crate::layout::Layout;
use crate::progress::Progress;
use crate::{CachePolicy, RemoteExecPolicy, RemoteMode};

/// After this many errors in one build the remote cache is not asked again in that build,
/// so a dead server costs a few timeouts, not one per action.
const MAX_ERRORS_PER_BUILD: usize = 3;

pub struct RemoteState {
    client: Option<Arc<dyn RemoteCache>>,
    mode: RemoteMode,
    /// `[buck2] default_allow_cache_upload`, for actions that leave it unset.
    default_allow: bool,
    policy: CachePolicy,
    pub errors: AtomicUsize,
    warned: AtomicBool,
    execution: Option<RemoteExecPolicy>,
}

impl RemoteState {
    pub fn new(
        client: Option<Arc<dyn RemoteCache>>,
        mode: RemoteMode,
        default_allow: bool,
        policy: CachePolicy,
    ) -> RemoteState {
        RemoteState {
            client,
            mode,
            default_allow,
            policy,
            errors: AtomicUsize::new(0),
            warned: AtomicBool::new(false),
            execution: None,
        }
    }

    pub fn with_execution(mut self, policy: Option<RemoteExecPolicy>) -> RemoteState {
        self.execution = policy;
        self
    }

    /// The platform's remote execution settings (`None`: remote execution is off).
    pub fn execution_policy(&self) -> Option<&RemoteExecPolicy> {
        self.execution.as_ref()
    }

    /// The engine and the platform's remote execution settings for a remote run (`None`:
    /// not configured).
    pub fn engine(&self) -> Option<(&dyn forge_reapi::RemoteExecution, &RemoteExecPolicy)> {
        let policy = self.execution.as_ref()?;
        let exec = self.client.as_ref()?.execution()?;
        Some((exec, policy))
    }

    /// Puts the blobs of a remote result in the local CAS (fetching what it lacks) and
    /// returns the result as a local cache entry.
    pub fn materialize(
        &self,
        action: &Action,
        hit: &RemoteHit,
        cas: &Cas,
        digests: &DigestCache,
    ) -> Result<CachedResult> {
        let Some(client) = self.client.as_ref() else {
            bail!("no remote client");
        };
        for f in &hit.files {
            if !cas.verify(&f.digest.hash, digests) {
                client.fetch(&f.digest, &cas.path_of(&f.digest.hash))?;
            }
        }
        to_cached(action, hit, cas)
    }

    fn client(&self) -> Option<&Arc<dyn RemoteCache>> {
        if self.mode == RemoteMode::Off
            || self.errors.load(Ordering::Relaxed) >= MAX_ERRORS_PER_BUILD
        {
            return None;
        }
        self.client.as_ref()
    }

    pub fn error(&self, progress: &Progress, what: &str, action: &Action, err: &anyhow::Error) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        if !self.warned.swap(true, Ordering::Relaxed) {
            progress.println(&format!(
                "warning: remote cache {what} failed for {}: {err:#}\nwarning: continuing with local execution; remote cache errors are counted in the build summary",
                action.display_name()
            ));
        }
    }

    /// Looks the action up remotely and, on a hit, puts its blobs in the local CAS and
    /// returns the result as a local cache entry.
    pub fn lookup(
        &self,
        action: &Action,
        desc: &ActionDescription,
        cas: &Cas,
        digests: &DigestCache,
        progress: &Progress,
    ) -> Option<CachedResult> {
        if !self.policy.reads {
            return None;
        }
        let client = self.client()?;
        let result = client.lookup(desc).and_then(|hit| match hit {
            None => Ok(None),
            Some(hit) => {
                for f in &hit.files {
                    if !cas.verify(&f.digest.hash, digests) {
                        client.fetch(&f.digest, &cas.path_of(&f.digest.hash))?;
                    }
                }
                to_cached(action, &hit, cas).map(Some)
            }
        });
        match result {
            Ok(r) => r,
            Err(e) => {
                self.error(progress, "lookup", action, &e);
                None
            }
        }
    }

    /// The action's key in the remote cache (the REAPI Action digest, `hash/size`), when a
    /// remote cache is configured: what `last-build.json` records so two builds' keys of one
    /// action can be compared.
    pub fn key_of(&self, desc: &ActionDescription) -> Option<String> {
        if self.mode == RemoteMode::Off || self.client.is_none() {
            return None;
        }
        let d = desc.action_digest().ok()?;
        Some(format!("{}/{}", d.hash, d.size_bytes))
    }

    /// Uploads a locally run action's result when the platform and the action allow it.
    /// Returns why the result was not shared (`None`: uploaded, or no remote cache to share
    /// it through, or a read-only one), so the build can name what a second machine will
    /// have to run again.
    pub fn upload(
        &self,
        action: &Action,
        desc: &ActionDescription,
        layout: &Layout,
        stdout: &[u8],
        stderr: &[u8],
        progress: &Progress,
    ) -> Option<String> {
        if self.mode != RemoteMode::ReadWrite || self.client.is_none() {
            return None;
        }
        if let Some(why) = self.upload_refused(action) {
            return Some(why);
        }
        let Some(client) = self.client() else {
            return Some(format!(
                "the remote cache was given up for this build after {MAX_ERRORS_PER_BUILD} errors"
            ));
        };
        let outputs: Vec<LocalOutput> = action
            .outputs
            .iter()
            .map(|o| LocalOutput {
                path: o.path.clone(),
                on_disk: layout.abs(&o.path),
                is_dir: o.is_dir,
            })
            .collect();
        if let Some(max) = self.policy.max_upload_bytes {
            // buck2 skips the upload of a result above `max_cache_upload_mebibytes`.
            let total: u64 = outputs.iter().map(|o| size_on_disk(&o.on_disk)).sum();
            if total > max {
                return Some(format!(
                    "its outputs ({total} bytes) exceed the platform's max_cache_upload_mebibytes ({} MiB)",
                    max >> 20
                ));
            }
        }
        match client.upload(desc, &outputs, stdout, stderr) {
            Ok(()) => None,
            Err(e) => {
                self.error(progress, "upload", action, &e);
                Some(format!("the upload failed: {e:#}"))
            }
        }
    }

    /// Why the platform or the action's own rule keeps its result out of the remote cache
    /// (buck2's rules: the platform's `allow_cache_uploads`, then the action's
    /// `allow_cache_upload`, unset meaning `[buck2] default_allow_cache_upload`).
    fn upload_refused(&self, action: &Action) -> Option<String> {
        if !self.policy.uploads {
            return Some("the execution platform does not set allow_cache_uploads = True".into());
        }
        let forge_core::ActionKind::Run {
            allow_cache_upload,
            local_only,
            ..
        } = &action.kind
        else {
            return Some("not a command".into());
        };
        let local = if *local_only { "local_only, " } else { "" };
        match allow_cache_upload {
            Some(true) => None,
            Some(false) => Some(format!("{local}its rule sets allow_cache_upload = False")),
            None if self.default_allow => None,
            None => Some(format!(
                "{local}its rule leaves allow_cache_upload unset and [buck2] \
                 default_allow_cache_upload is not true"
            )),
        }
    }
}

/// Bytes of a file, or of every file under a directory (symlinks not followed).
fn size_on_disk(path: &std::path::Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return 0;
    };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path)
        .map(|entries| entries.flatten().map(|e| size_on_disk(&e.path())).sum())
        .unwrap_or(0)
}

/// Turns a remote hit into a manifest of the declared outputs (a miss if one is absent).
fn to_cached(action: &Action, hit: &RemoteHit, cas: &Cas) -> Result<CachedResult> {
    let mut outputs = Vec::new();
    for o in &action.outputs {
        if o.is_dir {
            if !hit.dirs.contains(&o.path) {
                bail!("the remote result lacks output directory `{}`", o.path);
            }
            let prefix = format!("{}/", o.path);
            let mut entries = Vec::new();
            let mut dirs = BTreeSet::new();
            for f in hit.files.iter().filter(|f| f.path.starts_with(&prefix)) {
                let rel = f.path[prefix.len()..].to_string();
                let mut p = rel.as_str();
                while let Some(i) = p.rfind('/') {
                    p = &p[..i];
                    dirs.insert(p.to_string());
                }
                entries.push((
                    rel,
                    Node::File {
                        hash: f.digest.hash.clone(),
                        size: f.digest.size_bytes as u64,
                        executable: f.is_executable,
                    },
                ));
            }
            entries.extend(dirs.into_iter().map(|d| {
                (
                    d,
                    Node::Dir {
                        entries: Vec::new(),
                    },
                )
            }));
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            outputs.push(OutputRecord {
                path: o.path.clone(),
                node: Node::Dir { entries },
            });
        } else {
            let Some(f) = hit.files.iter().find(|f| f.path == o.path) else {
                bail!("the remote result lacks output `{}`", o.path);
            };
            outputs.push(OutputRecord {
                path: o.path.clone(),
                node: Node::File {
                    hash: f.digest.hash.clone(),
                    size: f.digest.size_bytes as u64,
                    executable: f.is_executable,
                },
            });
        }
    }
    let stream = |b: &[u8]| -> Result<Option<String>> {
        Ok(if b.is_empty() {
            None
        } else {
            Some(cas.store_bytes(b)?)
        })
    };
    Ok(CachedResult {
        outputs,
        stdout: stream(&hit.stdout)?,
        stderr: stream(&hit.stderr)?,
    })
}
