//! gRPC channels (TLS, extra headers), per-call deadlines, bounded retries with backoff,
//! and the circuit breaker that turns a dead server into a fast "unavailable".

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use bazel_remote_apis::build::bazel::remote::execution::v2::{
    action_cache_client::ActionCacheClient, capabilities_client::CapabilitiesClient,
    content_addressable_storage_client::ContentAddressableStorageClient,
    execution_client::ExecutionClient,
};
use bazel_remote_apis::google::bytestream::byte_stream_client::ByteStreamClient;
use bazel_remote_apis::google::longrunning::operations_client::OperationsClient;
use tonic::metadata::{AsciiMetadataKey, AsciiMetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Identity};
use tonic::{Code, Status};

use crate::config::{ClientOptions, Endpoint, ReConfig, SECTION};
use crate::error::{chain, RemoteError};

/// Adds `[buck2_re_client] http_headers` (API keys and the like) to every request.
#[derive(Clone)]
pub struct Headers(Arc<Vec<(AsciiMetadataKey, AsciiMetadataValue)>>);

impl tonic::service::Interceptor for Headers {
    fn call(&mut self, mut req: tonic::Request<()>) -> Result<tonic::Request<()>, Status> {
        for (k, v) in self.0.iter() {
            req.metadata_mut().insert(k.clone(), v.clone());
        }
        Ok(req)
    }
}

pub type Svc = InterceptedService<Channel, Headers>;

/// Room for the request framing around the blobs of one batch.
pub const BATCH_OVERHEAD: usize = 64 * 1024;

pub struct Clients {
    pub cas: ContentAddressableStorageClient<Svc>,
    pub bytestream: ByteStreamClient<Svc>,
    pub action_cache: ActionCacheClient<Svc>,
    pub capabilities: CapabilitiesClient<Svc>,
    /// The engine's Execution and Operations services; their channel is opened lazily
    /// (first use), so a cache-only build never connects to an engine it does not use.
    pub execution: Option<Engine>,
}

/// The services of the remote execution engine, on one channel.
#[derive(Clone)]
pub struct Engine {
    pub execution: ExecutionClient<Svc>,
    /// `google.longrunning.Operations`: cancels an operation no worker took in time.
    pub operations: OperationsClient<Svc>,
}

impl Engine {
    fn on(channel: Channel, headers: Headers, limit: usize) -> Engine {
        Engine {
            execution: ExecutionClient::with_interceptor(channel.clone(), headers.clone())
                .max_decoding_message_size(limit),
            operations: OperationsClient::with_interceptor(channel, headers),
        }
    }
}

pub async fn connect(cfg: &ReConfig, opts: &ClientOptions) -> Result<Clients> {
    let headers = Headers(Arc::new(
        cfg.http_headers
            .iter()
            .map(|(k, v)| -> Result<_> {
                Ok((
                    k.parse::<AsciiMetadataKey>().with_context(|| {
                        format!("[{SECTION}] http_headers: `{k}` is not a valid header name")
                    })?,
                    v.parse::<AsciiMetadataValue>().with_context(|| {
                        format!("[{SECTION}] http_headers: the value of `{k}` is not ASCII")
                    })?,
                ))
            })
            .collect::<Result<Vec<_>>>()?,
    ));
    let tls = if cfg.tls {
        Some(tls_config(cfg)?)
    } else {
        None
    };
    let cas_channel = open_channel(&cfg.cas, cfg, opts, tls.clone()).await?;
    let tls_for_engine = tls.clone();
    let ac_channel = if cfg.action_cache.uri == cfg.cas.uri {
        cas_channel.clone()
    } else {
        open_channel(&cfg.action_cache, cfg, opts, tls).await?
    };
    let limit = cfg.max_decoding_message_size.unwrap_or(64 << 20);
    Ok(Clients {
        cas: ContentAddressableStorageClient::with_interceptor(
            cas_channel.clone(),
            headers.clone(),
        )
        .max_decoding_message_size(limit)
        .max_encoding_message_size(limit),
        bytestream: ByteStreamClient::with_interceptor(cas_channel.clone(), headers.clone())
            .max_decoding_message_size(limit)
            .max_encoding_message_size(limit),
        action_cache: ActionCacheClient::with_interceptor(ac_channel, headers.clone())
            .max_decoding_message_size(limit),
        execution: match &cfg.engine {
            Some(ep) if ep.uri == cfg.cas.uri => {
                Some(Engine::on(cas_channel.clone(), headers.clone(), limit))
            }
            Some(ep) => Some(Engine::on(
                lazy_channel(ep, cfg, opts, tls_for_engine)?,
                headers.clone(),
                limit,
            )),
            None => None,
        },
        capabilities: CapabilitiesClient::with_interceptor(cas_channel, headers),
    })
}

fn tls_config(cfg: &ReConfig) -> Result<ClientTlsConfig> {
    let mut tls = ClientTlsConfig::new().with_native_roots();
    if let Some(path) = &cfg.tls_ca_certs {
        let pem = std::fs::read(path)
            .with_context(|| format!("[{SECTION}] tls_ca_certs = `{path}`: cannot read it"))?;
        tls = tls.ca_certificate(Certificate::from_pem(pem));
    }
    if let Some(path) = &cfg.tls_client_cert {
        // buck2 takes one PEM holding both the certificate chain and the private key.
        let pem = std::fs::read(path)
            .with_context(|| format!("[{SECTION}] tls_client_cert = `{path}`: cannot read it"))?;
        if !String::from_utf8_lossy(&pem).contains("PRIVATE KEY-----") {
            bail!(
                "[{SECTION}] tls_client_cert = `{path}`: no private key in it; the file must \
                 hold the client certificate and its key (PEM)"
            );
        }
        tls = tls.identity(Identity::from_pem(&pem, &pem));
    }
    Ok(tls)
}

/// A channel that connects on first use: the engine of a cache-only build stays untouched.
fn lazy_channel(
    ep: &Endpoint,
    cfg: &ReConfig,
    opts: &ClientOptions,
    tls: Option<ClientTlsConfig>,
) -> Result<Channel> {
    Ok(endpoint_of(ep, cfg, opts, tls)?.connect_lazy())
}

fn endpoint_of(
    ep: &Endpoint,
    cfg: &ReConfig,
    opts: &ClientOptions,
    tls: Option<ClientTlsConfig>,
) -> Result<tonic::transport::Endpoint> {
    let mut endpoint = tonic::transport::Endpoint::from_shared(ep.uri.clone())
        .with_context(|| format!("[{SECTION}] {} = `{}`", ep.key, ep.written))?
        .connect_timeout(opts.connect_timeout)
        .tcp_nodelay(true)
        // Big windows: one 1 MiB ByteStream chunk should not wait for a window update.
        .initial_stream_window_size(Some(8 << 20))
        .initial_connection_window_size(Some(16 << 20));
    if let Some(t) = cfg.keepalive_time {
        endpoint = endpoint
            .http2_keep_alive_interval(t)
            .keep_alive_while_idle(cfg.keepalive_while_idle);
    }
    if let Some(t) = cfg.keepalive_timeout {
        endpoint = endpoint.keep_alive_timeout(t);
    }
    if let Some(tls) = tls {
        endpoint = endpoint
            .tls_config(tls)
            .with_context(|| format!("[{SECTION}] tls: configuring TLS for `{}`", ep.written))?;
    }
    Ok(endpoint)
}

async fn open_channel(
    ep: &Endpoint,
    cfg: &ReConfig,
    opts: &ClientOptions,
    tls: Option<ClientTlsConfig>,
) -> Result<Channel> {
    let endpoint = endpoint_of(ep, cfg, opts, tls)?;
    let connecting = endpoint.connect();
    match tokio::time::timeout(opts.connect_timeout + Duration::from_secs(1), connecting).await {
        Ok(Ok(ch)) => Ok(ch),
        Ok(Err(e)) => Err(classify_connect_error(ep, cfg.tls, &chain(&e))),
        Err(_) => Err(RemoteError::Unavailable {
            server: ep.written.clone(),
            detail: format!("no connection within {:?}", opts.connect_timeout),
        }
        .into()),
    }
}

/// A refused or timed-out connection is the server being down (degrade); anything else at
/// this stage is almost always TLS on one side only, which is a configuration error.
fn classify_connect_error(ep: &Endpoint, tls: bool, detail: &str) -> anyhow::Error {
    let lower = detail.to_ascii_lowercase();
    let down = [
        "connection refused",
        "timed out",
        "no route to host",
        "unreachable",
    ];
    if down.iter().any(|d| lower.contains(d)) {
        return RemoteError::Unavailable {
            server: ep.written.clone(),
            detail: detail.to_string(),
        }
        .into();
    }
    if lower.contains("dns error") || lower.contains("failed to lookup") {
        return anyhow::anyhow!(
            "[{SECTION}] {} = `{}`: cannot resolve the host: {detail}",
            ep.key,
            ep.written
        );
    }
    tls_mismatch(ep, tls, detail)
}

pub fn tls_mismatch(ep: &Endpoint, tls: bool, detail: &str) -> anyhow::Error {
    if tls {
        anyhow::anyhow!(
            "[{SECTION}] tls = true (the default): the TLS handshake with `{}` ({} key) failed: \
             {detail}. For a plaintext server set `tls = false`; otherwise check `tls_ca_certs` \
             / `tls_client_cert`",
            ep.written,
            ep.key
        )
    } else {
        anyhow::anyhow!(
            "[{SECTION}] tls = false: `{}` ({} key) rejected the plaintext connection: \
             {detail}. If the server requires TLS, remove `tls = false`",
            ep.written,
            ep.key
        )
    }
}

/// Consecutive-failure counter: a build with a dead cache pays for `unavailable_after`
/// failed calls, then every call fails immediately.
pub struct Health {
    server: String,
    threshold: u32,
    consecutive: AtomicU32,
    unavailable: AtomicBool,
    reason: Mutex<String>,
}

impl Health {
    pub fn new(server: String, threshold: u32) -> Self {
        Health {
            server,
            threshold: threshold.max(1),
            consecutive: AtomicU32::new(0),
            unavailable: AtomicBool::new(false),
            reason: Mutex::new(String::new()),
        }
    }

    pub fn is_available(&self) -> bool {
        !self.unavailable.load(Ordering::SeqCst)
    }

    pub fn check(&self) -> Result<(), RemoteError> {
        if self.is_available() {
            Ok(())
        } else {
            Err(RemoteError::Unavailable {
                server: self.server.clone(),
                detail: self.reason.lock().unwrap().clone(),
            })
        }
    }

    pub fn success(&self) {
        self.consecutive.store(0, Ordering::SeqCst);
    }

    pub fn failure(&self, detail: String) -> RemoteError {
        let n = self.consecutive.fetch_add(1, Ordering::SeqCst) + 1;
        if n >= self.threshold {
            let mut reason = self.reason.lock().unwrap();
            if reason.is_empty() {
                *reason = format!("{n} consecutive failed calls, last: {detail}");
            }
            self.unavailable.store(true, Ordering::SeqCst);
        }
        RemoteError::Unavailable {
            server: self.server.clone(),
            detail,
        }
    }
}

pub fn is_transient(code: Code) -> bool {
    matches!(
        code,
        Code::Unavailable | Code::DeadlineExceeded | Code::ResourceExhausted | Code::Aborted
    ) || code == Code::Unknown
}

/// One unary RPC with a deadline per attempt and bounded exponential backoff.
pub async fn unary<T, F, Fut>(
    health: &Health,
    opts: &ClientOptions,
    what: &str,
    mut call: F,
) -> Result<T, RemoteError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<tonic::Response<T>, Status>>,
{
    health.check()?;
    let mut backoff = opts.initial_backoff;
    let mut attempt = 0;
    loop {
        let status = match tokio::time::timeout(opts.call_timeout, call()).await {
            Ok(Ok(resp)) => {
                health.success();
                return Ok(resp.into_inner());
            }
            Ok(Err(status)) => status,
            Err(_) => {
                Status::deadline_exceeded(format!("no answer within {:?}", opts.call_timeout))
            }
        };
        if !is_transient(status.code()) {
            // The server is alive and answered: that is not a connectivity failure.
            health.success();
            return Err(RemoteError::Status {
                what: what.to_string(),
                code: status.code(),
                message: status_detail(&status),
            });
        }
        if attempt >= opts.max_retries {
            return Err(health.failure(format!(
                "{what}: {:?}: {} (after {} attempts)",
                status.code(),
                status_detail(&status),
                attempt + 1
            )));
        }
        attempt += 1;
        tokio::time::sleep(backoff).await;
        backoff *= 2;
    }
}

pub fn status_detail(status: &Status) -> String {
    use std::error::Error;
    match status.source() {
        Some(src) => format!("{}: {}", status.message(), chain(src)),
        None => status.message().to_string(),
    }
}
