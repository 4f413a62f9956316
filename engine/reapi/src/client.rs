//! The blocking REAPI cache client the executor uses: owns a tokio runtime, connects and
//! checks capabilities up front, and implements `RemoteCache`.

use std::path::Path;
use std::sync::Arc;

use anyhow::{bail, Context, Result};
use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
use prost::Message;
use tonic::Code;

use crate::action::{check_relative_path, encode_action, encode_output_dir};
use crate::cas::BlobSource;
use crate::config::{CacheMode, ClientOptions, ReConfig, DEFAULT_MAX_TOTAL_BATCH_SIZE, SECTION};
use crate::error::RemoteError;
use crate::session::Inner;
use crate::transport::{self, tls_mismatch, unary, Health};
use crate::{ActionDescription, Digest, LocalOutput, OutputEntry, RemoteCache, RemoteHit};

/// A REAPI v2 cache client (GetActionResult / UpdateActionResult + CAS + ByteStream).
pub struct GrpcRemoteCache {
    rt: tokio::runtime::Runtime,
    inner: Arc<Inner>,
}

impl GrpcRemoteCache {
    /// Connects and runs GetCapabilities. Configuration mistakes are errors naming the
    /// `[buck2_re_client]` key; an unreachable server is an error for which
    /// `crate::is_unavailable` is true (callers warn and build locally).
    pub fn connect(cfg: ReConfig, opts: ClientOptions) -> Result<GrpcRemoteCache> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("forge-reapi")
            .enable_all()
            .build()
            .context("starting the remote cache client's runtime")?;
        let inner = rt.block_on(Inner::connect(cfg, opts))?;
        Ok(GrpcRemoteCache {
            rt,
            inner: Arc::new(inner),
        })
    }

    /// Reads one blob whole (verified against its digest).
    pub fn read_blob(&self, digest: &Digest) -> Result<Vec<u8>> {
        self.block_on(self.inner.read_blob(digest))
    }

    /// Uploads outputs + stdout/stderr and returns the ActionResult naming them (not
    /// written to the action cache: a remote worker reports it to its scheduler).
    // Deliberately the parameters of Inner::upload_outputs, which this blocks on.
    pub fn upload_outputs(
        &self,
        outputs: &[LocalOutput],
        stdout: &[u8],
        stderr: &[u8],
        exit_code: i32,
        worker: &str,
    ) -> Result<re::ActionResult> {
        self.block_on(
            self.inner
                .upload_outputs(outputs, stdout, stderr, exit_code, worker),
        )
    }

    /// The effective max batch size (bytes) after capabilities.
    pub fn batch_limit(&self) -> usize {
        self.inner.batch_limit
    }

    /// Runs `fut` on the client's runtime; from inside another runtime it moves to a plain
    /// thread, because blocking a runtime thread on another runtime panics.
    fn block_on<T: Send>(&self, fut: impl std::future::Future<Output = T> + Send) -> T {
        if tokio::runtime::Handle::try_current().is_ok() {
            std::thread::scope(|s| s.spawn(|| self.rt.block_on(fut)).join().unwrap())
        } else {
            self.rt.block_on(fut)
        }
    }
}

impl Inner {
    async fn connect(cfg: ReConfig, opts: ClientOptions) -> Result<Inner> {
        let clients = transport::connect(&cfg, &opts).await?;
        let health = Health::new(cfg.cas.written.clone(), opts.unavailable_after);
        let configured = cfg
            .max_total_batch_size
            .unwrap_or(DEFAULT_MAX_TOTAL_BATCH_SIZE);
        let mut inner = Inner {
            cfg,
            opts,
            clients,
            health,
            batch_limit: configured,
            corrupt_on_server: Default::default(),
        };
        if inner.cfg.capabilities {
            inner.check_capabilities().await?;
        }
        Ok(inner)
    }

    async fn check_capabilities(&mut self) -> Result<()> {
        let req = re::GetCapabilitiesRequest {
            instance_name: self.cfg.instance_name.clone(),
        };
        let client = self.clients.capabilities.clone();
        // Startup must not wait minutes for a server that accepts TCP but never answers (a
        // TLS server sent plaintext can behave so): connect-sized deadline, one retry.
        let startup = ClientOptions {
            call_timeout: self.opts.connect_timeout,
            max_retries: 1,
            ..self.opts.clone()
        };
        let probe = Health::new(self.cfg.cas.written.clone(), u32::MAX);
        let caps = match unary(&probe, &startup, "GetCapabilities", || {
            let mut c = client.clone();
            let r = req.clone();
            async move { c.get_capabilities(r).await }
        })
        .await
        {
            Ok(c) => c,
            Err(RemoteError::Status { code, message, .. })
                if matches!(
                    code,
                    Code::InvalidArgument | Code::NotFound | Code::PermissionDenied
                ) && message.to_ascii_lowercase().contains("instance") =>
            {
                bail!(
                    "[{SECTION}] instance_name = `{}`: the server at `{}` does not know this \
                     instance ({code:?}: {message}); use an instance name configured on the \
                     server",
                    self.cfg.instance_name,
                    self.cfg.cas.written
                )
            }
            Err(RemoteError::Status { code, message, .. })
                if matches!(code, Code::Unauthenticated | Code::PermissionDenied) =>
            {
                bail!(
                    "[{SECTION}] http_headers / tls_client_cert: the server at `{}` refused the \
                     credentials ({code:?}: {message})",
                    self.cfg.cas.written
                )
            }
            Err(RemoteError::Status { code, message, .. })
                if matches!(
                    code,
                    Code::Internal | Code::Unimplemented | Code::Cancelled | Code::Unknown
                ) =>
            {
                // A TLS/plaintext mix-up often surfaces as a protocol error on the first call.
                return Err(tls_mismatch(
                    &self.cfg.cas,
                    self.cfg.tls,
                    &format!("GetCapabilities: {code:?}: {message}"),
                ));
            }
            Err(RemoteError::Unavailable { server, detail }) => {
                // The TCP connection was accepted, so the server is there: a refused or
                // silent connection is "down", any other transport failure is a protocol
                // mismatch, which at this point means TLS on one side only.
                let lower = detail.to_ascii_lowercase();
                let down = [
                    "connection refused",
                    "no answer within",
                    "timed out",
                    "unreachable",
                ];
                if down.iter().any(|d| lower.contains(d)) {
                    let detail = if lower.contains("no answer within") {
                        format!(
                            "{detail}; if the server speaks {}, check `[{SECTION}] tls`",
                            if self.cfg.tls { "plaintext" } else { "TLS" }
                        )
                    } else {
                        detail
                    };
                    return Err(RemoteError::Unavailable { server, detail }.into());
                }
                return Err(tls_mismatch(&self.cfg.cas, self.cfg.tls, &detail));
            }
            Err(e) => return Err(e.into()),
        };
        let cache = caps.cache_capabilities.unwrap_or_default();
        let sha256 = re::digest_function::Value::Sha256 as i32;
        if !cache.digest_functions.is_empty() && !cache.digest_functions.contains(&sha256) {
            bail!(
                "[{SECTION}] address: the server at `{}` does not offer SHA256 digests \
                 (offers {:?}); buck2 and forge need SHA256",
                self.cfg.cas.written,
                cache
                    .digest_functions
                    .iter()
                    .map(|f| re::digest_function::Value::try_from(*f)
                        .map(|v| v.as_str_name().to_string())
                        .unwrap_or_else(|_| f.to_string()))
                    .collect::<Vec<_>>()
            );
        }
        if cache.max_batch_total_size_bytes > 0 {
            self.batch_limit = self
                .batch_limit
                .min(cache.max_batch_total_size_bytes as usize);
        }
        if self.opts.mode == CacheMode::ReadWrite
            && cache
                .action_cache_update_capabilities
                .is_some_and(|c| !c.update_enabled)
        {
            // Not fatal: reading still works. The uploads fail with the server's reason.
            eprintln!(
                "warning: remote cache `{}` does not accept action results from clients \
                 (update_enabled = false); results are not uploaded",
                self.cfg.cas.written
            );
        }
        Ok(())
    }

    async fn lookup(&self, action: &ActionDescription) -> Result<Option<RemoteHit>> {
        let encoded = encode_action(action)?;
        let req = re::GetActionResultRequest {
            instance_name: self.cfg.instance_name.clone(),
            action_digest: Some(encoded.action_digest.to_proto()),
            inline_stdout: true,
            inline_stderr: true,
            inline_output_files: vec![],
            digest_function: 0,
        };
        let client = self.clients.action_cache.clone();
        let result = match unary(&self.health, &self.opts, "GetActionResult", || {
            let mut c = client.clone();
            let r = req.clone();
            async move { c.get_action_result(r).await }
        })
        .await
        {
            Ok(r) => r,
            Err(e) if e.is_not_found() => return Ok(None),
            Err(e) => return Err(e.into()),
        };
        self.hit_from_result(result).await
    }

    /// Turns an ActionResult into a hit, or a miss when it cannot be restored faithfully:
    /// a failed action, symlink outputs, unsafe paths, or blobs the CAS no longer holds.
    #[allow(deprecated)] // older servers may still fill the deprecated symlink lists
    pub(crate) async fn hit_from_result(
        &self,
        result: re::ActionResult,
    ) -> Result<Option<RemoteHit>> {
        if result.exit_code != 0
            || !result.output_symlinks.is_empty()
            || !result.output_file_symlinks.is_empty()
            || !result.output_directory_symlinks.is_empty()
        {
            return Ok(None);
        }
        let mut files = Vec::new();
        for f in &result.output_files {
            if check_relative_path(&f.path).is_err() {
                return Ok(None);
            }
            files.push(OutputEntry {
                path: f.path.clone(),
                digest: Digest::from_proto(f.digest.as_ref())?,
                is_executable: f.is_executable,
            });
        }
        let mut dirs = Vec::new();
        for d in &result.output_directories {
            if check_relative_path(&d.path).is_err() {
                return Ok(None);
            }
            let tree_digest = Digest::from_proto(d.tree_digest.as_ref())?;
            let tree = match self.read_blob(&tree_digest).await {
                Ok(bytes) => re::Tree::decode(bytes.as_slice())
                    .with_context(|| format!("decoding Tree {tree_digest}"))?,
                Err(e) if is_not_found(&e) => return Ok(None),
                Err(e) => return Err(e),
            };
            match tree_files(&tree, &d.path)? {
                Some(mut entries) => files.append(&mut entries),
                None => return Ok(None),
            }
            dirs.push(d.path.clone());
        }
        let stdout = match self
            .std_stream(&result.stdout_raw, result.stdout_digest.as_ref())
            .await?
        {
            Some(s) => s,
            None => return Ok(None),
        };
        let stderr = match self
            .std_stream(&result.stderr_raw, result.stderr_digest.as_ref())
            .await?
        {
            Some(s) => s,
            None => return Ok(None),
        };
        let digests: Vec<Digest> = files.iter().map(|f| f.digest.clone()).collect();
        if !self.find_missing(&digests).await?.is_empty() {
            return Ok(None);
        }
        Ok(Some(RemoteHit {
            files,
            dirs,
            stdout,
            stderr,
        }))
    }

    pub(crate) async fn std_stream(
        &self,
        raw: &[u8],
        digest: Option<&re::Digest>,
    ) -> Result<Option<Vec<u8>>> {
        match digest {
            Some(d) if raw.is_empty() && d.size_bytes > 0 => {
                let d = Digest::from_proto(Some(d))?;
                match self.read_blob(&d).await {
                    Ok(b) => Ok(Some(b)),
                    Err(e) if is_not_found(&e) => Ok(None),
                    Err(e) => Err(e),
                }
            }
            _ => Ok(Some(raw.to_vec())),
        }
    }

    async fn upload(
        &self,
        action: &ActionDescription,
        outputs: &[LocalOutput],
        stdout: &[u8],
        stderr: &[u8],
    ) -> Result<()> {
        if self.opts.mode == CacheMode::Read {
            return Err(RemoteError::ReadOnly.into());
        }
        let encoded = encode_action(action)?;
        // Action and Command first: some servers refuse an ActionCache entry whose Action is
        // not in the CAS.
        self.upload_blobs(
            encoded
                .blobs
                .iter()
                .map(|(d, b)| (d.clone(), BlobSource::Bytes(Arc::new(b.clone()))))
                .collect(),
        )
        .await
        .context("uploading the Action, Command and input-root directories")?;

        let result = self
            .upload_outputs(outputs, stdout, stderr, 0, "forge (local execution)")
            .await?;

        let req = re::UpdateActionResultRequest {
            instance_name: self.cfg.instance_name.clone(),
            action_digest: Some(encoded.action_digest.to_proto()),
            action_result: Some(result),
            results_cache_policy: None,
            digest_function: 0,
        };
        let client = self.clients.action_cache.clone();
        unary(&self.health, &self.opts, "UpdateActionResult", || {
            let mut c = client.clone();
            let r = req.clone();
            async move { c.update_action_result(r).await }
        })
        .await?;
        Ok(())
    }

    /// Uploads an action's outputs, stdout and stderr (what the CAS lacks) and returns the
    /// ActionResult that references them; used for local results and by remote workers.
    pub(crate) async fn upload_outputs(
        &self,
        outputs: &[LocalOutput],
        stdout: &[u8],
        stderr: &[u8],
        exit_code: i32,
        worker: &str,
    ) -> Result<re::ActionResult> {
        let mut blobs: Vec<(Digest, BlobSource)> = Vec::new();
        let mut result = re::ActionResult {
            exit_code,
            execution_metadata: Some(re::ExecutedActionMetadata {
                worker: worker.to_string(),
                ..Default::default()
            }),
            ..Default::default()
        };
        for out in outputs {
            check_relative_path(&out.path).with_context(|| format!("output `{}`", out.path))?;
            if out.is_dir {
                let tree = encode_output_dir(&out.on_disk)?;
                for f in tree.files {
                    blobs.push((f.digest, BlobSource::File(f.on_disk)));
                }
                blobs.push((
                    tree.tree_digest.clone(),
                    BlobSource::Bytes(Arc::new(tree.tree_bytes)),
                ));
                result.output_directories.push(re::OutputDirectory {
                    path: out.path.clone(),
                    tree_digest: Some(tree.tree_digest.to_proto()),
                    ..Default::default()
                });
            } else {
                use std::os::unix::fs::PermissionsExt;
                let meta = std::fs::metadata(&out.on_disk).with_context(|| {
                    format!("output `{}` at {}", out.path, out.on_disk.display())
                })?;
                let digest = Digest::of_file(&out.on_disk)?;
                result.output_files.push(re::OutputFile {
                    path: out.path.clone(),
                    digest: Some(digest.to_proto()),
                    is_executable: meta.permissions().mode() & 0o111 != 0,
                    ..Default::default()
                });
                blobs.push((digest, BlobSource::File(out.on_disk.clone())));
            }
        }
        for (data, slot) in [
            (stdout, &mut result.stdout_digest),
            (stderr, &mut result.stderr_digest),
        ] {
            if !data.is_empty() {
                let d = Digest::of_bytes(data);
                *slot = Some(d.to_proto());
                blobs.push((d, BlobSource::Bytes(Arc::new(data.to_vec()))));
            }
        }
        result.output_files.sort_by(|a, b| a.path.cmp(&b.path));
        result
            .output_directories
            .sort_by(|a, b| a.path.cmp(&b.path));
        self.upload_blobs(blobs)
            .await
            .context("uploading the action's outputs")?;
        Ok(result)
    }
}

fn is_not_found(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<RemoteError>()
            .is_some_and(RemoteError::is_not_found)
    })
}

/// Files of an output directory's Tree with paths under `base`; `None` when the tree cannot
/// be restored as plain files (symlinks, dangling children, unsafe names).
fn tree_files(tree: &re::Tree, base: &str) -> Result<Option<Vec<OutputEntry>>> {
    let children: std::collections::HashMap<Digest, &re::Directory> = tree
        .children
        .iter()
        .map(|d| (Digest::of_message(d).0, d))
        .collect();
    let Some(root) = tree.root.as_ref() else {
        return Ok(None);
    };
    let mut out = Vec::new();
    let mut stack = vec![(root, base.to_string(), 0usize)];
    while let Some((dir, prefix, depth)) = stack.pop() {
        if !dir.symlinks.is_empty() || depth > 256 {
            return Ok(None);
        }
        for f in &dir.files {
            if f.name.is_empty() || f.name.contains('/') || f.name == "." || f.name == ".." {
                return Ok(None);
            }
            out.push(OutputEntry {
                path: format!("{prefix}/{}", f.name),
                digest: Digest::from_proto(f.digest.as_ref())?,
                is_executable: f.is_executable,
            });
        }
        for sub in &dir.directories {
            if sub.name.is_empty() || sub.name.contains('/') || sub.name == "." || sub.name == ".."
            {
                return Ok(None);
            }
            let d = Digest::from_proto(sub.digest.as_ref())?;
            match children.get(&d) {
                Some(child) => stack.push((child, format!("{prefix}/{}", sub.name), depth + 1)),
                None => return Ok(None),
            }
        }
    }
    out.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(Some(out))
}

impl RemoteCache for GrpcRemoteCache {
    fn lookup(&self, action: &ActionDescription) -> Result<Option<RemoteHit>> {
        self.block_on(self.inner.lookup(action))
    }

    fn fetch(&self, digest: &Digest, dest: &Path) -> Result<()> {
        self.block_on(self.inner.fetch_to_file(digest, dest))
            .with_context(|| format!("fetching {digest} into {}", dest.display()))
    }

    // Deliberately the parameters of RemoteCache::upload and of Inner::upload it blocks on.
    fn upload(
        &self,
        action: &ActionDescription,
        outputs: &[LocalOutput],
        stdout: &[u8],
        stderr: &[u8],
    ) -> Result<()> {
        self.block_on(self.inner.upload(action, outputs, stdout, stderr))
    }

    fn is_available(&self) -> bool {
        self.inner.health.is_available()
    }

    fn execution(&self) -> Option<&dyn crate::RemoteExecution> {
        self.inner.clients.execution.as_ref().map(|_| self as _)
    }
}

impl crate::RemoteExecution for GrpcRemoteCache {
    fn execute(&self, cmd: &crate::RemoteCommand<'_>) -> Result<crate::RemoteOutcome> {
        self.block_on(self.inner.execute(cmd))
    }
}
