//! A Remote Execution API v2 client (action cache, CAS, and `Execution`), configured with
//! buck2's own `[buck2_re_client]` keys so buck2 and forge users can share one server.
//!
//! The action key is the digest of a real REAPI `Action` (`Command` + input-root Merkle tree
//! of `Directory` messages, canonical encoding), so entries written by forge are readable by
//! any REAPI client and vice versa. Every downloaded blob is verified against its digest.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Result;

mod action;
mod cas;
mod client;
pub mod config;
mod digest;
mod error;
mod execute;
mod in_flight;
mod session;
mod transport;

pub use action::{command_of, encode_action, EncodedAction};

/// Refuses output paths that are absolute or could escape the execution root.
pub fn check_output_path(path: &str) -> Result<()> {
    action::check_relative_path(path).map(|_| ())
}
pub use client::GrpcRemoteCache;
pub use config::{CacheMode, ClientOptions, ReConfig};
pub use error::{is_corrupt, is_unavailable, RemoteError};
pub use execute::{remote_action_digest, QueueTimeout, RemoteCommand, RemoteOutcome};
pub use in_flight::{cancel_in_flight, in_flight_count};

/// Opens the remote cache described by the `[buck2_re_client]` section, or `Ok(None)` when
/// the section configures no address.
///
/// Errors: configuration mistakes (malformed address, TLS the server rejects, unknown
/// instance name, unreadable certificate) name the `[buck2_re_client]` key. When the server
/// is merely unreachable the error satisfies [`is_unavailable`]: warn once and build locally.
pub fn from_buckconfig(
    section: &BTreeMap<String, String>,
    options: ClientOptions,
) -> Result<Option<Arc<dyn RemoteCache>>> {
    let Some(cfg) = ReConfig::parse(section)? else {
        return Ok(None);
    };
    let client = GrpcRemoteCache::connect(cfg, options)?;
    Ok(Some(Arc::new(client)))
}

/// A REAPI digest: lowercase sha256 hex and size.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Digest {
    pub hash: String,
    pub size_bytes: i64,
}

/// One input of an action as it sits in the input root (project-relative path).
#[derive(Clone, Debug)]
pub struct InputFile {
    pub path: String,
    pub digest: Digest,
    pub is_executable: bool,
}

/// Everything that determines an action's result, in the shape of a REAPI `Command` +
/// input root. `action_digest()` of this is the ActionCache key.
#[derive(Clone, Debug)]
pub struct ActionDescription {
    pub argv: Vec<String>,
    /// Explicit env, sorted by name.
    pub env: Vec<(String, String)>,
    /// Declared file outputs and directory outputs, project-relative.
    pub output_files: Vec<String>,
    pub output_dirs: Vec<String>,
    pub inputs: Vec<InputFile>,
    /// Platform properties (also carries the toolchain identity).
    pub platform: Vec<(String, String)>,
}

/// One output file of a cached action result (files inside output dirs are listed too).
#[derive(Clone, Debug)]
pub struct OutputEntry {
    pub path: String,
    pub digest: Digest,
    pub is_executable: bool,
}

#[derive(Clone, Debug)]
pub struct RemoteHit {
    pub files: Vec<OutputEntry>,
    /// Output directories (project-relative), possibly empty.
    pub dirs: Vec<String>,
    pub stdout: Vec<u8>,
    pub stderr: Vec<u8>,
}

/// A locally produced output to upload: its project-relative path and where it is on disk.
#[derive(Clone, Debug)]
pub struct LocalOutput {
    pub path: String,
    pub on_disk: PathBuf,
    pub is_dir: bool,
}

/// The cache operations the executor needs. Implementations must never return a wrong
/// blob: every download is verified against its digest.
///
/// Errors never mean "wrong output": treat any error as a miss (warn); when
/// [`is_unavailable`] is true the server is gone and `is_available()` turns false for the rest
/// of the build, so warn once. The methods block; they may be called from many threads.
pub trait RemoteCache: Send + Sync {
    /// `GetActionResult`; a result that references missing blobs is a miss (`Ok(None)`).
    fn lookup(&self, action: &ActionDescription) -> Result<Option<RemoteHit>>;
    /// Streams a blob to `dest` (written under a temporary name, verified, then renamed).
    fn fetch(&self, digest: &Digest, dest: &Path) -> Result<()>;
    /// Uploads the Action, Command, input-root directories, outputs, and the ActionResult.
    fn upload(
        &self,
        action: &ActionDescription,
        outputs: &[LocalOutput],
        stdout: &[u8],
        stderr: &[u8],
    ) -> Result<()>;
    /// False once the client has given up on the server for the rest of the build.
    fn is_available(&self) -> bool {
        true
    }
    /// The remote execution side of this client, when it has one.
    fn execution(&self) -> Option<&dyn RemoteExecution> {
        None
    }
}

/// `Execution.Execute` of one action. Blocks until the engine reports it done; a non-zero
/// exit is `Ok` (the outcome carries exit code and stderr), an engine failure is `Err`.
pub trait RemoteExecution: Send + Sync {
    fn execute(&self, cmd: &RemoteCommand<'_>) -> Result<RemoteOutcome>;
}
