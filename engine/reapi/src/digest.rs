//! SHA-256 digests in REAPI form, computed over bytes, messages or streamed files.

use std::io::Read;
use std::path::Path;

use anyhow::{bail, Context, Result};
use bazel_remote_apis::build::bazel::remote::execution::v2 as re;
use prost::Message;
use sha2::{Digest as _, Sha256};

use crate::Digest;

const HASH_CHUNK: usize = 1 << 20;

impl Digest {
    pub fn of_bytes(bytes: &[u8]) -> Digest {
        Digest {
            hash: hex(&Sha256::digest(bytes)),
            size_bytes: bytes.len() as i64,
        }
    }

    /// The digest of a message's canonical encoding, plus that encoding (the CAS blob).
    pub fn of_message<M: Message>(msg: &M) -> (Digest, Vec<u8>) {
        let bytes = msg.encode_to_vec();
        (Digest::of_bytes(&bytes), bytes)
    }

    /// Streams the file through the hasher so large artifacts never sit in memory.
    pub fn of_file(path: &Path) -> Result<Digest> {
        let mut file =
            std::fs::File::open(path).with_context(|| format!("opening {}", path.display()))?;
        let mut hasher = Sha256::new();
        let mut buf = vec![0u8; HASH_CHUNK];
        let mut size = 0i64;
        loop {
            let n = file
                .read(&mut buf)
                .with_context(|| format!("reading {}", path.display()))?;
            if n == 0 {
                break;
            }
            hasher.update(&buf[..n]);
            size += n as i64;
        }
        Ok(Digest {
            hash: hex(&hasher.finalize()),
            size_bytes: size,
        })
    }

    pub fn is_empty_blob(&self) -> bool {
        self.size_bytes == 0
    }

    pub fn to_proto(&self) -> re::Digest {
        re::Digest {
            hash: self.hash.clone(),
            size_bytes: self.size_bytes,
        }
    }

    /// Digests from the server end up in resource names and file names: only well-formed
    /// SHA-256 digests are accepted.
    pub fn from_proto(d: Option<&re::Digest>) -> Result<Digest> {
        let d = d.context("the server sent a message without a digest")?;
        if d.hash.len() != 64 || !d.hash.bytes().all(|b| b.is_ascii_hexdigit()) {
            bail!("the server sent a malformed SHA-256 digest `{}`", d.hash);
        }
        if d.size_bytes < 0 {
            bail!("the server sent a negative blob size for {}", d.hash);
        }
        Ok(Digest {
            hash: d.hash.to_ascii_lowercase(),
            size_bytes: d.size_bytes,
        })
    }
}

impl std::fmt::Display for Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.hash, self.size_bytes)
    }
}

/// Incremental hashing of a download, so the blob is verified while it is written.
pub(crate) struct StreamingDigest {
    hasher: Sha256,
    size: i64,
}

impl StreamingDigest {
    pub fn new() -> Self {
        StreamingDigest {
            hasher: Sha256::new(),
            size: 0,
        }
    }
    pub fn update(&mut self, data: &[u8]) {
        self.hasher.update(data);
        self.size += data.len() as i64;
    }
    pub fn size(&self) -> i64 {
        self.size
    }
    pub fn finish(self) -> Digest {
        Digest {
            hash: hex(&self.hasher.finalize()),
            size_bytes: self.size,
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(s, "{b:02x}");
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sha256_known_vectors() {
        // FIPS 180-2 test vectors.
        assert_eq!(
            Digest::of_bytes(b"").hash,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        assert_eq!(
            Digest::of_bytes(b"abc").hash,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn file_digest_equals_bytes_digest() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        let data: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7) as u8).collect();
        std::fs::write(&p, &data).unwrap();
        assert_eq!(Digest::of_file(&p).unwrap(), Digest::of_bytes(&data));
    }

    #[test]
    fn malformed_server_digests_are_refused() {
        let bad = re::Digest {
            hash: "../../etc/passwd".into(),
            size_bytes: 1,
        };
        assert!(Digest::from_proto(Some(&bad)).is_err());
    }
}
