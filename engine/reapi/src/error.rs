//! Typed failures, so the executor can tell "server gone: warn once and build locally" from
//! "this blob is corrupt: treat as a miss".

use crate::Digest;

#[derive(Debug)]
pub enum RemoteError {
    /// The server cannot be reached or keeps timing out; after repeated failures the client
    /// returns this immediately for the rest of the build.
    Unavailable { server: String, detail: String },
    /// Downloaded bytes do not hash to their digest: never used, always a miss.
    Corrupt { digest: Digest, detail: String },
    /// The server answered with a non-retryable error.
    Status {
        what: String,
        code: tonic::Code,
        message: String,
    },
    /// `upload` on a client opened with `CacheMode::Read`.
    ReadOnly,
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RemoteError::Unavailable { server, detail } => write!(
                f,
                "remote cache {server} is unavailable ({detail}); building locally without it"
            ),
            RemoteError::Corrupt { digest, detail } => write!(
                f,
                "remote cache returned corrupt data for blob {digest}: {detail}; treated as a miss"
            ),
            RemoteError::Status {
                what,
                code,
                message,
            } => write!(f, "remote cache {what} failed: {code:?}: {message}"),
            RemoteError::ReadOnly => write!(
                f,
                "the remote cache is opened read-only (--remote-cache=read); nothing is uploaded"
            ),
        }
    }
}

impl std::error::Error for RemoteError {}

impl RemoteError {
    pub fn is_not_found(&self) -> bool {
        matches!(self, RemoteError::Status { code, .. } if *code == tonic::Code::NotFound)
    }
}

/// True when `err` (from any function of this crate) means the server is unreachable, as
/// opposed to a configuration mistake: callers warn and build locally instead of failing.
pub fn is_unavailable(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        matches!(
            e.downcast_ref::<RemoteError>(),
            Some(RemoteError::Unavailable { .. })
        )
    })
}

/// True when `err` means downloaded data failed verification.
pub fn is_corrupt(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        matches!(
            e.downcast_ref::<RemoteError>(),
            Some(RemoteError::Corrupt { .. })
        )
    })
}

/// The full cause chain in one line: tonic's top-level message ("transport error") alone
/// does not tell the user what to fix.
pub fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut out = err.to_string();
    let mut cur = err.source();
    while let Some(e) = cur {
        let s = e.to_string();
        if !out.contains(&s) {
            out.push_str(": ");
            out.push_str(&s);
        }
        cur = e.source();
    }
    out
}
