//! The one BuildGrid 0.4.4 configuration of the project (the YAML `bgd server start` reads):
//! CAS, ByteStream and action cache always; with [`Execution`] also the execution and bots
//! services, scheduled by BuildGrid's SQL scheduler. Everything on one port, so a client's
//! `[buck2_re_client] address` and a worker's `--address` are the same URL.

use std::fmt::Write;
use std::path::PathBuf;

/// The platform properties BuildGrid matches between an action and a worker
/// (platforms/BUCK asks for them, `forge-re-worker --property` offers them).
pub const MATCH_PROPERTY_KEYS: &[&str] = &["OSFamily", "fpga-tools"];

/// BuildGrid's gRPC thread pool, which is also its limit on concurrent RPCs (0.4.4's
/// default, 5 per CPU, answers RESOURCE_EXHAUSTED beyond it). Each idle worker's poll and
/// each client's running `Execute` hold one for as long as they last, so a pool of workers
/// and a build with many actions in flight need far more than a small host's CPUs give.
pub const GRPC_THREADS: usize = 256;

/// Part of every action's platform (forge's toolchain identity) but never matched: any worker
/// may run any toolchain's action as long as the matched keys agree.
pub const WILDCARD_PROPERTY_KEYS: &[&str] = &["forge-tool"];

#[derive(Clone, Debug)]
pub struct Config {
    /// The address the channel binds (`127.0.0.1`, or `0.0.0.0` for workers on other hosts).
    pub host: String,
    pub port: u16,
    /// BuildGrid's disk storage (the CAS); the action cache is an LRU index over it.
    pub storage: PathBuf,
    /// The REAPI instance name (`[buck2_re_client] instance_name`); empty by default.
    pub instance: String,
    pub tls: Option<Tls>,
    /// A file holding an HS256 secret: every request then needs `authorization: Bearer`.
    pub jwt_secret: Option<PathBuf>,
    pub max_cached_refs: usize,
    /// gRPC threads, which is also BuildGrid's limit of RPCs in flight (beyond it:
    /// RESOURCE_EXHAUSTED "Concurrent RPC limit exceeded!"). Every waiting Execute stream
    /// and every idle worker's long poll holds one, so BuildGrid's default (5 per CPU) is
    /// too few for a build of a dozen remote actions on a small server.
    pub thread_pool_size: usize,
    /// `None`: a cache-only server (no execution or bots services, no database).
    pub execution: Option<Execution>,
}

#[derive(Clone, Debug)]
pub struct Tls {
    pub cert: PathBuf,
    pub key: PathBuf,
}

#[derive(Clone, Debug)]
pub struct Execution {
    /// SQLAlchemy URL of the scheduler's database. It must name `+psycopg2`: SQLAlchemy 2.1
    /// defaults to psycopg 3, and BuildGrid 0.4.4's change notifier only works with psycopg2.
    pub postgres_url: String,
    /// Seconds a worker may stay silent before BuildGrid declares it dead and requeues its
    /// lease (BuildGrid's own default is 600 s).
    pub keepalive_timeout: u32,
    /// Matched keys beyond [`MATCH_PROPERTY_KEYS`] (the tests add `test`, so tests sharing a
    /// server never take each other's actions).
    pub extra_match_keys: Vec<String>,
}

impl Config {
    /// A cache-only server on `127.0.0.1:port` storing under `storage`.
    pub fn cache_only(port: u16, storage: PathBuf) -> Config {
        Config {
            host: "127.0.0.1".to_string(),
            port,
            storage,
            instance: String::new(),
            tls: None,
            jwt_secret: None,
            max_cached_refs: 100_000,
            thread_pool_size: 256,
            execution: None,
        }
    }

    /// The YAML text for `bgd server start`.
    pub fn render(&self) -> String {
        let mut y = format!("thread-pool-size: {}\n", self.thread_pool_size);
        let addr = format!("{}:{}", self.host, self.port);
        let _ = writeln!(y, "thread-pool-size: {GRPC_THREADS}");
        let _ = writeln!(y, "server:\n  - !channel\n    address: {}", quote(&addr));
        match &self.tls {
            None => y.push_str("    insecure-mode: true\n"),
            Some(t) => {
                let _ = writeln!(
                    y,
                    "    insecure-mode: false\n    credentials:\n      tls-server-key: {}\n      tls-server-cert: {}",
                    path(&t.key),
                    path(&t.cert)
                );
            }
        }
        match &self.jwt_secret {
            None => y.push_str("authorization:\n  method: none\n"),
            Some(s) => {
                let _ = writeln!(
                    y,
                    "authorization:\n  method: jwt\n  secret: {}\n  algorithm: hs256",
                    path(s)
                );
            }
        }
        let _ = writeln!(
            y,
            "storages:\n  - !disk-storage &cas\n    path: {}",
            path(&self.storage)
        );
        let _ = writeln!(
            y,
            "caches:\n  - !lru-action-cache &ac\n    storage: *cas\n    max-cached-refs: {}\n    allow-updates: true\n    cache-failed-actions: false",
            self.max_cached_refs
        );
        if let Some(e) = &self.execution {
            render_scheduler(&mut y, e);
        }
        let _ = writeln!(
            y,
            "instances:\n  - name: {}\n    services:\n      - !action-cache\n        cache: *ac\n      - !cas\n        storage: *cas\n      - !bytestream\n        storage: *cas",
            quote(&self.instance)
        );
        if self.execution.is_some() {
            y.push_str("      - !execution\n        scheduler: *sched\n");
        }
        y
    }
}

fn render_scheduler(y: &mut String, e: &Execution) {
    let matched: Vec<String> = MATCH_PROPERTY_KEYS
        .iter()
        .map(|k| k.to_string())
        .chain(e.extra_match_keys.iter().cloned())
        .map(|k| quote(&k))
        .collect();
    let wildcard: Vec<String> = WILDCARD_PROPERTY_KEYS.iter().map(|k| quote(k)).collect();
    let _ = writeln!(
        y,
        "schedulers:\n  - !sql-scheduler &sched\n    storage: *cas\n    action-cache: *ac\n    sql: !sql-connection\n      connection-string: {}\n    property-set: !dynamic-property-set\n      match-property-keys: [{}]\n      wildcard-property-keys: [{}]",
        quote(&e.postgres_url),
        matched.join(", "),
        wildcard.join(", ")
    );
    // The reaper runs every second, so a dead worker's lease is requeued about
    // `keepalive_timeout` after its last contact; idle workers' polls are answered within 0.2 s.
    let _ = writeln!(
        y,
        "    bot-session-keepalive-timeout: {}\n    session-expiry-timer-interval: 1\n    poll-interval: 0.2",
        e.keepalive_timeout
    );
}

fn path(p: &std::path::Path) -> String {
    quote(&p.display().to_string())
}

/// A YAML double-quoted scalar (only `\` and `"` need escaping in the strings we write).
fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}
