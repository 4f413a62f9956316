//! The local action cache: action key -> the outputs (as a manifest of CAS digests) and the
//! stdout/stderr of the run that produced them. An entry is written only after every blob
//! it names is in the CAS, always by temporary file + rename.

use std::fs;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::layout::write_atomic;

/// What sits at one declared output path.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Node {
    File {
        hash: String,
        size: u64,
        executable: bool,
    },
    Symlink {
        target: String,
    },
    /// Entries relative to the directory, sorted; sub-directories appear as `Dir` entries
    /// with empty `entries` of their own (the list is flat).
    Dir {
        entries: Vec<(String, Node)>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct OutputRecord {
    pub path: String,
    pub node: Node,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CachedResult {
    pub outputs: Vec<OutputRecord>,
    /// CAS digests of the captured streams (absent when empty).
    pub stdout: Option<String>,
    pub stderr: Option<String>,
}

pub struct ActionCache {
    dir: PathBuf,
}

impl ActionCache {
    pub fn new(dir: PathBuf) -> ActionCache {
        ActionCache { dir }
    }

    fn path_of(&self, key: &str) -> PathBuf {
        self.dir.join(&key[..2]).join(key)
    }

    /// The cached result for `key`; an unreadable entry counts as a miss and is dropped.
    pub fn get(&self, key: &str) -> Option<CachedResult> {
        match self.read(key)? {
            Ok(r) => Some(r),
            Err(_) => {
                self.remove(key);
                None
            }
        }
    }

    /// The cached result for `key`, writing nothing (for a process without the workspace
    /// lock): `None` when there is none, `Some(Err)` when the entry is unreadable.
    pub fn read(&self, key: &str) -> Option<serde_json::Result<CachedResult>> {
        let bytes = fs::read(self.path_of(key)).ok()?;
        Some(serde_json::from_slice(&bytes))
    }

    pub fn put(&self, key: &str, result: &CachedResult) -> std::io::Result<()> {
        let bytes = serde_json::to_vec(result).map_err(std::io::Error::other)?;
        write_atomic(&self.path_of(key), &bytes)
    }

    pub fn remove(&self, key: &str) {
        let _ = fs::remove_file(self.path_of(key));
    }
}
