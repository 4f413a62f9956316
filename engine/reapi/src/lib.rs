//! A Remote Execution API v2 cache client (cache only, no remote execution), configured with
//! buck2's own `[buck2_re_client]` keys so buck2 and forge users can share one server.
//! (Interface stub: the implementation fills in the client.)

use std::path::{Path, PathBuf};

use anyhow::Result;

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
}
