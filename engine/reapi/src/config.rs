//! `[buck2_re_client]` parsing with buck2's key names, defaults and address rules, so one
//! `.buckconfig` section configures both engines.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{bail, Context, Result};

/// The section every error names, so users know where to look.
pub const SECTION: &str = "buck2_re_client";

/// buck2's default when neither the config nor the server's capabilities give a limit.
pub const DEFAULT_MAX_TOTAL_BATCH_SIZE: usize = 4_000_000;

/// Whether the build may write to the remote cache (`--remote-cache=read|readwrite`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheMode {
    Read,
    ReadWrite,
}

/// How the client behaves on the wire; chosen by the CLI, not by `.buckconfig`.
#[derive(Clone, Debug)]
pub struct ClientOptions {
    pub mode: CacheMode,
    /// TCP/TLS connect deadline (also bounds the GetCapabilities handshake).
    pub connect_timeout: Duration,
    /// Deadline of one unary call; for streams, the longest wait for the next message.
    pub call_timeout: Duration,
    /// Retries of one call on UNAVAILABLE / DEADLINE_EXCEEDED before it counts as failed.
    pub max_retries: u32,
    /// First backoff; doubled on every retry.
    pub initial_backoff: Duration,
    /// After this many consecutive failed calls the client stops talking to the server for
    /// the rest of the build, so a dead cache costs seconds, not one timeout per action.
    pub unavailable_after: u32,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            mode: CacheMode::ReadWrite,
            connect_timeout: Duration::from_secs(5),
            call_timeout: Duration::from_secs(30),
            max_retries: 3,
            initial_backoff: Duration::from_millis(100),
            unavailable_after: 3,
        }
    }
}

/// A parsed endpoint: the URI tonic connects to plus the text the user wrote (for errors).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Endpoint {
    pub key: &'static str,
    pub written: String,
    pub uri: String,
}

/// The subset of buck2's `Buck2OssReConfiguration` a cache-only client uses.
#[derive(Clone, Debug)]
pub struct ReConfig {
    pub cas: Endpoint,
    pub action_cache: Endpoint,
    /// The Execution service: `engine_address`, else `address` (buck2's keys); `None`
    /// when only `cas_address`/`action_cache_address` are set (a cache-only setup).
    pub engine: Option<Endpoint>,
    pub instance_name: String,
    pub tls: bool,
    pub tls_ca_certs: Option<String>,
    pub tls_client_cert: Option<String>,
    pub http_headers: Vec<(String, String)>,
    pub capabilities: bool,
    pub max_total_batch_size: Option<usize>,
    pub max_decoding_message_size: Option<usize>,
    pub keepalive_time: Option<Duration>,
    pub keepalive_timeout: Option<Duration>,
    pub keepalive_while_idle: bool,
}

impl ReConfig {
    /// `Ok(None)` when the section configures no cache address at all.
    pub fn parse(section: &BTreeMap<String, String>) -> Result<Option<ReConfig>> {
        let get = |key: &str| -> Result<Option<String>> {
            match section.get(key) {
                None => Ok(None),
                Some(raw) if raw.trim().is_empty() => Ok(None),
                Some(raw) => substitute_env(raw.trim())
                    .with_context(|| format!("[{SECTION}] {key} = `{raw}`"))
                    .map(Some),
            }
        };
        let tls = match section.get("tls") {
            None => true,
            Some(v) => parse_bool(v).with_context(|| format!("[{SECTION}] tls = `{v}`"))?,
        };
        let address = get("address")?;
        let cas = get("cas_address")?.or_else(|| address.clone());
        let ac = get("action_cache_address")?.or_else(|| address.clone());
        let (cas, ac) = match (cas, ac) {
            (None, None) => return Ok(None),
            (Some(_), None) => bail!(
                "[{SECTION}] cas_address is set but action_cache_address is not: set both, or \
                 set `address` for a server that serves both"
            ),
            (None, Some(_)) => bail!(
                "[{SECTION}] action_cache_address is set but cas_address is not: set both, or \
                 set `address` for a server that serves both"
            ),
            (Some(c), Some(a)) => (c, a),
        };
        let key_of = |specific: &'static str| {
            if section.get(specific).is_some_and(|v| !v.trim().is_empty()) {
                specific
            } else {
                "address"
            }
        };
        let cas = parse_address(key_of("cas_address"), &cas, tls)?;
        let action_cache = parse_address(key_of("action_cache_address"), &ac, tls)?;
        let engine = match (get("engine_address")?, get("address")?) {
            (Some(e), _) => Some(parse_address("engine_address", &e, tls)?),
            (None, Some(a)) => Some(parse_address("address", &a, tls)?),
            (None, None) => None,
        };
        let http_headers = match get("http_headers")? {
            None => Vec::new(),
            Some(v) => parse_headers(&v)?,
        };
        Ok(Some(ReConfig {
            cas,
            action_cache,
            engine,
            instance_name: get("instance_name")?.unwrap_or_default(),
            tls,
            tls_ca_certs: get("tls_ca_certs")?,
            tls_client_cert: get("tls_client_cert")?,
            http_headers,
            capabilities: match section.get("capabilities") {
                None => true,
                Some(v) => {
                    parse_bool(v).with_context(|| format!("[{SECTION}] capabilities = `{v}`"))?
                }
            },
            max_total_batch_size: parse_num(section, "max_total_batch_size")?,
            max_decoding_message_size: parse_num(section, "max_decoding_message_size")?,
            keepalive_time: parse_num(section, "grpc_keepalive_time_secs")?
                .map(|s: u64| Duration::from_secs(s)),
            keepalive_timeout: parse_num(section, "grpc_keepalive_timeout_secs")?
                .map(|s: u64| Duration::from_secs(s)),
            keepalive_while_idle: match section.get("grpc_keepalive_while_idle") {
                None => false,
                Some(v) => parse_bool(v)
                    .with_context(|| format!("[{SECTION}] grpc_keepalive_while_idle = `{v}`"))?,
            },
        }))
    }
}

fn parse_bool(v: &str) -> Result<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" => Ok(true),
        "false" | "0" | "no" | "off" => Ok(false),
        _ => bail!("expected true or false"),
    }
}

fn parse_num<T: std::str::FromStr>(
    section: &BTreeMap<String, String>,
    key: &str,
) -> Result<Option<T>> {
    match section.get(key) {
        None => Ok(None),
        Some(v) => v.trim().parse::<T>().map(Some).map_err(|_| {
            anyhow::anyhow!("[{SECTION}] {key} = `{v}`: expected a non-negative integer")
        }),
    }
}

/// buck2 substitutes `$VAR` (and `${VAR}`) from the environment in addresses, headers and
/// certificate paths, so secrets such as API keys stay out of `.buckconfig`.
pub fn substitute_env(raw: &str) -> Result<String> {
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        let rest = &raw[i + 1..];
        let (name, consumed) = if let Some(braced) = rest.strip_prefix('{') {
            let end = braced
                .find('}')
                .with_context(|| format!("unterminated `${{` at byte {i}"))?;
            (&braced[..end], end + 2)
        } else {
            let end = rest
                .find(|ch: char| !(ch.is_ascii_alphanumeric() || ch == '_'))
                .unwrap_or(rest.len());
            (&rest[..end], end)
        };
        if name.is_empty() {
            out.push('$');
            continue;
        }
        let value = std::env::var(name)
            .with_context(|| format!("environment variable `{name}` is not set"))?;
        out.push_str(&value);
        for _ in 0..consumed {
            chars.next();
        }
    }
    Ok(out)
}

/// buck2's `prepare_uri`: `grpc://`, `dns:`, `ipv4:`, `ipv6:` or no scheme; TLS comes only
/// from the `tls` key, so `http(s)://` is refused rather than silently contradicting it.
pub fn parse_address(key: &'static str, written: &str, tls: bool) -> Result<Endpoint> {
    let ctx = || format!("[{SECTION}] {key} = `{written}`");
    let lower = written.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        bail!(
            "{}: do not put http:// or https:// in the address, you should omit it (or use \
             grpc://); TLS is chosen by `[{SECTION}] tls` (default true)",
            ctx()
        );
    }
    let authority = if let Some(rest) = lower.strip_prefix("grpc://") {
        &written[written.len() - rest.len()..]
    } else if let Some(rest) = lower.strip_prefix("dns:") {
        let rest = &written[written.len() - rest.len()..];
        // `dns://[resolver]/host:port`: the resolver part is ignored (system resolver).
        match rest.strip_prefix("//") {
            Some(with_resolver) => match with_resolver.find('/') {
                Some(slash) => &with_resolver[slash + 1..],
                None => bail!("{}: expected dns:[//resolver/]host:port", ctx()),
            },
            None => rest,
        }
    } else if let Some(rest) = lower
        .strip_prefix("ipv4:")
        .or_else(|| lower.strip_prefix("ipv6:"))
    {
        let rest = &written[written.len() - rest.len()..];
        if rest.contains(',') {
            bail!(
                "{}: address lists are not supported, give one address",
                ctx()
            );
        }
        rest
    } else if let Some(pos) = lower.find("://") {
        bail!(
            "{}: unsupported scheme `{}://`; use grpc://host:port, dns:host:port, \
             ipv4:addr:port, ipv6:[addr]:port or host:port",
            ctx(),
            &written[..pos]
        );
    } else {
        written
    };
    let authority = authority.trim_end_matches('/');
    if authority.is_empty() || authority.contains('/') || authority.contains(char::is_whitespace) {
        bail!("{}: expected host:port", ctx());
    }
    let (host, port) = split_host_port(authority).with_context(ctx)?;
    if host.is_empty() {
        bail!("{}: the host is empty", ctx());
    }
    let scheme = if tls { "https" } else { "http" };
    let uri = match port {
        Some(p) => format!("{scheme}://{host}:{p}"),
        None => format!("{scheme}://{host}"),
    };
    uri.parse::<http_uri::Uri>()
        .map_err(|e| anyhow::anyhow!("{}: not a valid address: {e}", ctx()))?;
    Ok(Endpoint {
        key,
        written: written.to_string(),
        uri,
    })
}

fn split_host_port(authority: &str) -> Result<(&str, Option<u16>)> {
    let (host, port) = if authority.starts_with('[') {
        let end = authority
            .find(']')
            .context("unterminated `[` in an IPv6 address")?;
        let host = &authority[..=end];
        match &authority[end + 1..] {
            "" => (host, None),
            rest => (
                host,
                Some(
                    rest.strip_prefix(':')
                        .context("expected `:port` after `]`")?,
                ),
            ),
        }
    } else {
        match authority.rsplit_once(':') {
            Some((h, p)) if !h.contains(':') => (h, Some(p)),
            Some(_) => bail!("an IPv6 address must be written in brackets: [addr]:port"),
            None => (authority, None),
        }
    };
    let port = match port {
        None => None,
        Some(p) => Some(
            p.parse::<u16>()
                .map_err(|_| anyhow::anyhow!("`{p}` is not a port number"))?,
        ),
    };
    Ok((host, port))
}

/// `Header: Value, Header2: Value` as buck2 writes `http_headers`.
fn parse_headers(v: &str) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for item in v.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (name, value) = item.split_once(':').with_context(|| {
            format!("[{SECTION}] http_headers: `{item}` is not `Header: Value`")
        })?;
        let name = name.trim().to_ascii_lowercase();
        if name.is_empty()
            || !name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
        {
            bail!("[{SECTION}] http_headers: `{name}` is not a valid header name");
        }
        out.push((name, value.trim().to_string()));
    }
    Ok(out)
}

// `http::Uri` is what tonic parses; aliased so the module reads as "validate like tonic".
mod http_uri {
    pub use tonic::codegen::http::Uri;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn no_address_means_no_cache() {
        assert!(ReConfig::parse(&section(&[("instance_name", "x")]))
            .unwrap()
            .is_none());
    }

    #[test]
    fn address_fills_both_and_tls_defaults_on() {
        let c = ReConfig::parse(&section(&[("address", "grpc://cache:8980")]))
            .unwrap()
            .unwrap();
        assert_eq!(c.cas.uri, "https://cache:8980");
        assert_eq!(c.action_cache.uri, "https://cache:8980");
        assert!(c.tls);
    }

    #[test]
    fn schemes_like_buck2() {
        let ok = |a: &str| parse_address("address", a, false).unwrap().uri;
        assert_eq!(ok("grpc://localhost:50051"), "http://localhost:50051");
        assert_eq!(ok("localhost:50051"), "http://localhost:50051");
        assert_eq!(ok("dns:localhost:50051"), "http://localhost:50051");
        assert_eq!(ok("dns:///localhost:50051"), "http://localhost:50051");
        assert_eq!(ok("ipv4:127.0.0.1:1"), "http://127.0.0.1:1");
        assert_eq!(ok("ipv6:[::1]:50051"), "http://[::1]:50051");
        let err = parse_address("cas_address", "https://x:1", true)
            .unwrap_err()
            .to_string();
        assert!(err.contains("[buck2_re_client] cas_address"), "{err}");
        assert!(err.contains("omit it"), "{err}");
        for bad in [
            "grpc://",
            "host:port",
            "a b:1",
            "ftp://x:1",
            "grpc://h:1/path",
        ] {
            let err = parse_address("address", bad, false).unwrap_err();
            assert!(
                format!("{err:#}").contains("[buck2_re_client] address"),
                "{bad}: {err:#}"
            );
        }
    }

    #[test]
    fn env_substitution_in_headers() {
        std::env::set_var("FORGE_REAPI_TEST_KEY", "s3cret");
        let c = ReConfig::parse(&section(&[
            ("address", "h:1"),
            ("tls", "false"),
            (
                "http_headers",
                "x-api-key: $FORGE_REAPI_TEST_KEY, X-Other: ${FORGE_REAPI_TEST_KEY}b",
            ),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!(
            c.http_headers,
            vec![
                ("x-api-key".to_string(), "s3cret".to_string()),
                ("x-other".to_string(), "s3cretb".to_string())
            ]
        );
        let err = ReConfig::parse(&section(&[
            ("address", "h:1"),
            ("http_headers", "k: $FORGE_REAPI_SURELY_UNSET_VAR"),
        ]))
        .unwrap_err();
        assert!(format!("{err:#}").contains("http_headers"), "{err:#}");
    }

    #[test]
    fn half_configured_addresses_are_errors() {
        let err = ReConfig::parse(&section(&[("cas_address", "h:1")])).unwrap_err();
        assert!(err.to_string().contains("action_cache_address"));
        let err = ReConfig::parse(&section(&[("address", "h:1"), ("tls", "maybe")])).unwrap_err();
        assert!(format!("{err:#}").contains("tls"));
    }
}
